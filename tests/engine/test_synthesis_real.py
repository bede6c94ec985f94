"""The pipeline with the real packaged models: SmolLM2-135M (llama.cpp) writes, MiniLM checks.

Slow on a 2-core CPU (a minute or more per answer), so one small library, few passages.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.cite.markers import cited_numbers
from engine.models import default_embedder_path, default_lm_path
from engine.progress import CancelToken
from engine.request import AskRequest, RequestOptions
from engine.service import Engine
from engine.synthesis.mentions import NOT_MENTIONED
from engine.types import Answer, AnswerMode

pytestmark = [pytest.mark.slow, pytest.mark.skipif(default_lm_path() is None or default_embedder_path() is None,
                                                   reason="the packaged SmolLM2 / MiniLM are not installed")]

QUESTION = "How is SPECTER trained to produce document-level embeddings of scientific papers?"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, papers_dir: Path) -> Iterator[Engine]:
    with Engine(tmp_path_factory.mktemp("real") / "home") as engine:
        list(engine.add_documents([papers_dir / "2020.acl-main.207.pdf", papers_dir / "2020.acl-main.447.pdf"]))
        yield engine


def faithful(answer: Answer) -> None:
    papers = {p.n for p in answer.papers}
    assert all(n in papers for n in cited_numbers(answer.text))
    for sentence in answer.sentences:
        for citation in sentence.citations:
            assert citation.quote in answer.passage(citation.passage_id).text
            assert citation.rects, "library quotes carry their rectangles on the page"


def test_smollm2_writes_with_feedback_and_the_cache_covers_later_steps(library: Engine) -> None:
    stages: list[str] = []
    options = RequestOptions(top_n=4, rewrite=False, feedback=True, save=False)
    answer = library.ask(AskRequest(QUESTION, mode="write", options=options), on_stage=stages.append)
    faithful(answer)
    assert answer.mode == AnswerMode.WRITTEN and answer.model
    assert stages[:3] == ["loading", "retrieving", "drafting"] and stages[-1] == "verifying"
    later = [s for s in answer.steps if s.step.startswith(("feedback", "revise"))]
    assert later, answer.steps
    for step in later:  # only the new turn is evaluated; the rest comes from the KV cache
        assert step.prompt_tokens_evaluated <= 0.25 * step.prompt_tokens, step


def test_default_answer_is_useful_and_faithful(library: Engine) -> None:
    """The bundled 135M model's drafts do not survive verification (benchmarks/answers.py), so by
    default it answers with the digest, and says why."""
    answer = library.ask(AskRequest(QUESTION, options=RequestOptions(top_n=4, rewrite=False, feedback=False)))
    faithful(answer)
    assert answer.mode == AnswerMode.DIGEST and "too small" in answer.notice and answer.references
    assert any(r.bib.title.startswith("SPECTER") for r in answer.references)
    assert library.answer(answer.id).text == answer.text


def test_cancel_mid_answer_with_the_real_model(library: Engine) -> None:
    cancel = CancelToken()
    seen: list[str] = []

    def on_token(piece: str) -> None:
        seen.append(piece)
        if len(seen) >= 5:
            cancel.cancel()

    answer = library.ask(AskRequest(QUESTION, mode="write", options=RequestOptions(top_n=3, rewrite=False, save=False)),
                         on_token=on_token, cancel=cancel)
    assert answer.cancelled
    faithful(answer)


def test_off_topic_question_is_answered_plainly(library: Engine) -> None:
    answer = library.ask(AskRequest("What is the best recipe for banana bread?",
                                    options=RequestOptions(rewrite=False, save=False)))
    assert answer.mode == AnswerMode.NO_EVIDENCE and not answer.references


def test_a_name_no_paper_mentions_is_said_before_any_quote(library: Engine) -> None:
    """Neither SPECTER's nor S2ORC's paper mentions ReVerb: the digest says so instead of opening with a quote
    on another paper's constraints; a question naming SPECTER keeps its answer."""
    options = RequestOptions(rewrite=False, save=False)
    missing = library.ask(AskRequest("What is the ReVerb syntactic constraint?", mode="digest", options=options))
    assert missing.text.startswith(f"{NOT_MENTIONED} “ReVerb”"), missing.text[:200]
    assert not missing.sentences[0].citations and missing.references  # the closest passages still follow
    held = library.ask(AskRequest("What data is SPECTER trained on?", mode="digest", options=options))
    assert not held.text.startswith(NOT_MENTIONED) and held.sentences[0].citations
