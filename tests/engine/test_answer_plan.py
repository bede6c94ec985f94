"""One plan per question: the request, the settings and the measured constants make one frozen plan
before any work, and the answer records it."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf

from engine.config import Settings
from engine.embed import HashingEmbedder
from engine.models import SMALL_MODEL_BYTES
from engine.request import AskRequest, RequestOptions, Scope
from engine.service import Engine
from engine.service_ask import TOO_SMALL_NOTICE, plan_answer
from engine.synthesis.options import AskOptions


def gguf_of_size(path: Path, size: int) -> Path:
    with path.open("wb") as handle:
        handle.truncate(size)  # sparse: only the size decides whether a model can write
    return path


def with_model(path: Path, **generation: object) -> Settings:
    settings = Settings()
    return replace(settings, generation=replace(settings.generation, model=str(path), **generation))


def test_a_model_too_small_to_write_plans_a_digest_and_says_why(tmp_path: Path) -> None:
    small = with_model(gguf_of_size(tmp_path / "small.gguf", 1 << 20))
    plan = plan_answer(AskRequest("How do coronas form?"), small)
    assert (plan.mode, plan.notice, plan.load_model) == ("digest", TOO_SMALL_NOTICE, False)
    assert not plan.options.judge_answers and plan.model.small
    # Asked to write, it writes (and loads the model), without the notice.
    asked = plan_answer(AskRequest("How do coronas form?", mode="write"), small)
    assert (asked.mode, asked.notice, asked.load_model, asked.options.mode) == ("write", "", True, "write")


def test_a_writer_plans_auto_with_the_settings_and_the_requests_overrides(tmp_path: Path) -> None:
    writer = gguf_of_size(tmp_path / "writer.gguf", SMALL_MODEL_BYTES + 1)
    plan = plan_answer(AskRequest("How do coronas form?"), with_model(writer, feedback=True))
    assert (plan.mode, plan.model.path, plan.model.can_write, plan.load_model) == ("auto", writer, True, True)
    assert plan.options.judge_answers and plan.options.feedback
    assert plan.options.top_n == Settings().retrieval.top_n
    # Measured constants reach the plan through the options' defaults.
    assert plan.options.per_paper == AskOptions().per_paper
    overridden = plan_answer(AskRequest("How do coronas form?", options=RequestOptions(top_n=5, feedback=False)),
                             with_model(writer, feedback=True, digest=True))
    assert (overridden.options.top_n, overridden.options.feedback, overridden.mode) == (5, False, "digest")
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.mode = "write"  # type: ignore[misc]


def test_the_plan_is_recorded_with_the_request_it_was_made_from(tmp_path: Path) -> None:
    request = AskRequest("How do coronas form?", scope=Scope(source="library", doc_ids=("abc", "def"),
                                                             label="Selected papers (2)"),
                         options=RequestOptions(rewrite=False))
    recorded = dict(plan_answer(request, Settings()).record())
    assert recorded["request.source"] == "library" and recorded["request.papers"] == "abc,def"
    assert recorded["request.rewrite"] == "False" and recorded["request.mode"] == ""
    assert recorded["retrieval.top_n"] == str(Settings().retrieval.top_n)
    assert recorded["scope"] == "Selected papers (2)" and "model.file" in recorded


def test_an_answer_records_its_plan(engine: Engine, tmp_path: Path) -> None:
    engine.__dict__["embedder"] = HashingEmbedder()
    engine.__dict__["support_embedder"] = HashingEmbedder()
    pdf = text_pdf(tmp_path / "corona.pdf", [paper_text("protein corona on lipid nanoparticles", 4)])
    doc_id = next(iter(engine.add_documents([pdf]))).doc_id
    assert doc_id
    answer = engine.ask(AskRequest("How do proteins adsorb on lipid nanoparticles?", mode="digest",
                                   scope=Scope(doc_ids=(doc_id[:12],)), options=RequestOptions(save=False)))
    recorded = dict(answer.settings)
    assert recorded["mode"] == "digest" and recorded["request.mode"] == "digest"
    assert recorded["request.papers"] == doc_id  # the prefix the user gave, resolved by the plan's validation
