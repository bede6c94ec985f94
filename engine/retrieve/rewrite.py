"""Query rewriting (rewrite-retrieve-read): the language model turns a question into keyword queries.

The rewrites go to BM25 beside the question itself and their rankings are fused with it; dense
search keeps the question, which it understands better than keywords. Small local models often
answer with chatter, echoes or empty lines, so output is parsed defensively and anything
unusable is dropped: with nothing usable left, search simply uses the question alone.
"""

from __future__ import annotations

import logging
import re
from importlib import resources
from typing import Protocol

from engine.errors import EngineError, QueryError
from engine.progress import CancelToken
from engine.protocols import ChatMessage, LanguageModel
from engine.retrieve.fts import query_terms

log = logging.getLogger(__name__)

MAX_REWRITES = 3
# A rewrite longer than this is a paragraph, not a query.
MAX_REWRITE_CHARS = 160
# Questions are cut to this many characters in the prompt (the 10,000-character query case).
MAX_PROMPT_QUESTION_CHARS = 1_000
_LIST_MARK = re.compile(r"^\s*(?:[-*•]+|\d+[.):]|query\s*\d*\s*[:.)-]|q\d*\s*[:.)])\s*", re.IGNORECASE)
_PREAMBLE = re.compile(r"^(here (are|is)|sure|queries|search queries|keyword queries)\b", re.IGNORECASE)


class QueryRewriter(Protocol):
    def rewrite(self, question: str, cancel: CancelToken | None = None) -> list[str]:
        """Up to three keyword queries for ``question``; an empty list means "use the question"."""
        ...


def prompt_template() -> str:
    return (resources.files("resources") / "prompts" / "rewrite_query.txt").read_text(encoding="utf-8")


def parse_rewrites(output: str, question: str, limit: int = MAX_REWRITES) -> list[str]:
    """The usable queries in an LM's reply: one per line, list marks and quotes stripped.

    A line is dropped when it is empty, too long, a preamble ("Here are..."), repeats the
    question or an earlier query, or shares no content word with the question (a small model's
    invention would steer search away from what was asked).
    """
    try:
        question_terms = set(query_terms(question))
    except QueryError:
        return []
    seen = {" ".join(sorted(question_terms))}
    queries: list[str] = []
    for raw in output.splitlines():
        line = _LIST_MARK.sub("", raw).strip().strip("\"'`").strip()
        if not line or len(line) > MAX_REWRITE_CHARS or _PREAMBLE.match(line) or line.endswith(":"):
            continue
        try:
            terms = query_terms(line)
        except QueryError:
            continue
        key = " ".join(sorted(terms))
        if key in seen or not question_terms.intersection(terms):
            continue
        seen.add(key)
        queries.append(line)
        if len(queries) == limit:
            break
    return queries


class LMQueryRewriter:
    """Asks a :class:`~engine.protocols.LanguageModel` for keyword queries."""

    def __init__(self, model: LanguageModel, max_tokens: int = 64) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self._template = prompt_template()

    def rewrite(self, question: str, cancel: CancelToken | None = None) -> list[str]:
        prompt = self._template.replace("{question}", " ".join(question.split())[:MAX_PROMPT_QUESTION_CHARS])
        try:
            completion = self.model.chat([ChatMessage("user", prompt)], max_tokens=self.max_tokens, temperature=0.0,
                                         cancel=cancel)
        except EngineError as exc:
            if cancel is not None:
                cancel.check()
            log.warning("query rewriting failed (%s); searching with the question itself", exc)
            return []
        if completion.cancelled and cancel is not None:
            cancel.check()
        rewrites = parse_rewrites(completion.text, question)
        log.info("query rewrites: %s", rewrites or "(none usable; using the question)")
        return rewrites
