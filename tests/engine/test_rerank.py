"""Query rewriting and reranking with a scripted language model (the model is beside the point:
what matters is how its replies are parsed, merged, and survived when they are useless)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from engine.bibliography import Bibliography
from engine.errors import EngineError, GenerationError, ModelNotFoundError
from engine.generate.base import ChatMessage, Completion
from engine.progress import CancelToken
from engine.rerank.base import NoReranker
from engine.rerank.choose import make_reranker
from engine.rerank.lm_judge import LMJudgeReranker, parse_grade
from engine.retrieve.rewrite import LMQueryRewriter, parse_rewrites
from engine.types import SearchHit

QUESTION = "How do lipid nanoparticles form a protein corona with serum proteins?"


class ScriptedModel:
    """Replies from a script, in order (the last reply repeats); records the prompts it saw."""

    def __init__(self, replies: Sequence[str] | None = None, error: Exception | None = None) -> None:
        self.replies = list(replies or [""])
        self.error = error
        self.prompts: list[str] = []

    @property
    def model_id(self) -> str:
        return "scripted"

    @property
    def context_size(self) -> int:
        return 2048

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def chat(self, messages: Sequence[ChatMessage], *, max_tokens: int = 256, temperature: float = 0.0,
             stop: Sequence[str] = (), on_token: object = None, cancel: CancelToken | None = None) -> Completion:
        self.prompts.append(messages[-1].content)
        if self.error is not None:
            raise self.error
        reply = self.replies[min(len(self.prompts) - 1, len(self.replies) - 1)]
        return Completion(text=reply, prompt_tokens=10, prompt_tokens_evaluated=10, completion_tokens=5,
                          seconds_to_first_token=0.0, seconds_total=0.0, finish_reason="stop")


def test_rewrites_are_parsed_from_lists_with_marks_and_quotes() -> None:
    reply = ('Here are some queries:\n1. "lipid nanoparticle protein corona"\n- serum protein adsorption '
             'nanoparticles\n* corona formation mechanisms LNP\n4. extra query about corona')
    assert parse_rewrites(reply, QUESTION) == ["lipid nanoparticle protein corona",
                                               "serum protein adsorption nanoparticles",
                                               "corona formation mechanisms LNP"]


@pytest.mark.parametrize("reply", [
    "",
    "I cannot help with that.",
    "How do lipid nanoparticles form a protein corona with serum proteins?",  # an echo of the question
    "quantum chromodynamics lattice gauge theory",  # shares no word with the question
    "x" * 400,
    "Queries:\n\n   \n",
])
def test_unusable_rewrites_fall_back_to_the_question(reply: str) -> None:
    model = ScriptedModel([reply])
    assert LMQueryRewriter(model).rewrite(QUESTION) == []
    assert QUESTION in model.prompts[0]


def test_a_failing_model_means_no_rewrites_not_a_failed_search() -> None:
    assert LMQueryRewriter(ScriptedModel(error=GenerationError("out of memory"))).rewrite(QUESTION) == []


def test_a_huge_question_is_cut_in_the_prompt() -> None:
    model = ScriptedModel(["protein corona nanoparticles"])
    LMQueryRewriter(model).rewrite("protein corona " + "padding words " * 2000)
    assert len(model.prompts[0]) < 2_000


def hits(count: int) -> list[SearchHit]:
    return [SearchHit(passage_id=f"p{i}", doc_id=f"d{i}", source="library", bib=Bibliography(f"Paper {i}"),
                      text=f"passage number {i}", ranks=(("bm25", i + 1),)) for i in range(count)]


def test_lm_judge_reorders_by_grade_and_keeps_fused_order_among_equals() -> None:
    # Grades for p0..p4: an unparseable reply counts as in-between (1.5).
    model = ScriptedModel(["1", "Grade: 3", "no idea", "3 - directly answers", "0"])
    reranked = LMJudgeReranker(model).rerank(QUESTION, hits(5))
    assert [h.passage_id for h in reranked] == ["p1", "p3", "p2", "p0", "p4"]
    assert dict(reranked[0].ranks)["rerank"] == 1 and dict(reranked[0].ranks)["bm25"] == 2
    assert parse_grade("The grade is 2.") == 2 and parse_grade("ten") is None


def test_lm_judge_stops_when_cancelled() -> None:
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises(EngineError):
        LMJudgeReranker(ScriptedModel(["3"])).rerank(QUESTION, hits(3), cancel)


def test_rerankers_by_name(tmp_path: Path) -> None:
    assert isinstance(make_reranker("none"), NoReranker)
    assert isinstance(make_reranker("auto"), NoReranker)
    with pytest.raises(ModelNotFoundError, match="cross-encoder"):
        make_reranker(f"cross-encoder:{tmp_path}")
    with pytest.raises(EngineError, match="Unknown reranker"):
        make_reranker("bogus")
