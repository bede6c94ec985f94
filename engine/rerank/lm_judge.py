"""The language model as relevance judge: it grades each candidate 0-3 and the grades reorder them.

Grades are coarse, so the fused order breaks ties (a candidate keeps its place among equals),
and a reply without a grade leaves the candidate where fusion put it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from importlib import resources

from engine.errors import GenerationError
from engine.progress import CancelToken
from engine.protocols import ChatMessage, LanguageModel
from engine.rerank.base import with_rerank_scores
from engine.types import SearchHit

log = logging.getLogger(__name__)

MAX_PASSAGE_CHARS = 1_200
_GRADE = re.compile(r"\b([0-3])\b")


def parse_grade(reply: str) -> int | None:
    """The first 0-3 grade in a reply ("2", "Grade: 3", "3 - highly relevant"), or None."""
    found = _GRADE.search(reply)
    return int(found.group(1)) if found else None


class LMJudgeReranker:
    name = "lm"

    def __init__(self, model: LanguageModel) -> None:
        self.model = model
        self._template = (resources.files("resources") / "prompts" / "judge_relevance.txt").read_text(encoding="utf-8")

    def grade(self, query: str, hit: SearchHit, cancel: CancelToken | None = None) -> int | None:
        prompt = (self._template.replace("{question}", " ".join(query.split())[:1000]).replace("{title}", hit.bib.title)
                  .replace("{passage}", " ".join(hit.text.split())[:MAX_PASSAGE_CHARS]))
        try:
            completion = self.model.chat([ChatMessage("user", prompt)], max_tokens=4, temperature=0.0, cancel=cancel)
        except GenerationError as exc:
            log.warning("relevance judging failed (%s); keeping the fused order", exc)
            return None
        return parse_grade(completion.text)

    def rerank(self, query: str, hits: Sequence[SearchHit], cancel: CancelToken | None = None) -> list[SearchHit]:
        scores = []
        for position, hit in enumerate(hits):
            if cancel is not None:
                cancel.check()
            grade = self.grade(query, hit, cancel)
            # Ungraded candidates count as "somewhat relevant" (1.5) so a parse failure neither
            # promotes nor buries them; the small position term keeps fused order among equals.
            scores.append((1.5 if grade is None else grade) - position * 1e-3)
        return with_rerank_scores(hits, scores)
