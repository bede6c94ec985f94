"""An AskRequest is checked in one place (engine.service_ask.validated) before any search or model load,
and an answer is saved by the service alone, with the scope the user named."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf

from engine.embed import HashingEmbedder
from engine.errors import AskRequestError, QueryError
from engine.request import AskRequest, RequestOptions, Scope
from engine.service import Engine
from engine.types import AnswerMode


@pytest.fixture
def offline_engine(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> Engine:
    """The engine with a deterministic embedder, and a language model that must never be loaded: the
    requests here are refused before it, or answered as a digest without it."""
    engine.__dict__["embedder"] = HashingEmbedder()
    engine.__dict__["support_embedder"] = HashingEmbedder()

    def no_model(*_: object, **__: object) -> None:
        raise AssertionError("the language model was loaded")

    monkeypatch.setattr(engine.language_models, "get", no_model)
    return engine


@pytest.fixture
def paper(offline_engine: Engine, tmp_path: Path) -> str:
    """The id of one stored paper about protein coronas."""
    pdf = text_pdf(tmp_path / "corona.pdf", [paper_text("protein corona on lipid nanoparticles", 4)])
    results = list(offline_engine.add_documents([pdf]))
    assert results and results[0].doc_id, results
    return results[0].doc_id


def test_an_unknown_mode_is_refused_by_name(offline_engine: Engine) -> None:
    with pytest.raises(AskRequestError, match=r"Unknown answer mode 'essay'.*auto, write, digest"):
        offline_engine.ask(AskRequest("How do protein coronas form?", mode="essay"))


@pytest.mark.parametrize("question", ["", "   \n\t "])
def test_an_empty_question_is_refused_with_an_example(offline_engine: Engine, question: str) -> None:
    with pytest.raises(AskRequestError, match="The question is empty") as raised:
        offline_engine.ask(AskRequest(question))
    assert isinstance(raised.value, QueryError)  # callers that caught the old error still do


def test_a_scope_naming_a_removed_paper_is_refused(offline_engine: Engine, paper: str) -> None:
    offline_engine.remove(paper)
    with pytest.raises(AskRequestError, match=rf"paper '{paper}' is not in the library .*removed"):
        offline_engine.ask(AskRequest("How do protein coronas form?", scope=Scope(doc_ids=(paper,))))


def test_a_scope_naming_no_paper_is_refused(offline_engine: Engine) -> None:
    with pytest.raises(AskRequestError, match="names none"):
        offline_engine.ask(AskRequest("How do protein coronas form?", scope=Scope(doc_ids=())))


def test_a_scope_naming_an_unknown_datastore_is_refused(offline_engine: Engine) -> None:
    with pytest.raises(AskRequestError, match=r"Unknown search source 'pes2o'.*none installed"):
        offline_engine.ask(AskRequest("How do protein coronas form?", scope=Scope(source="pes2o")))
    with pytest.raises(AskRequestError, match="No datastore is installed"):
        offline_engine.ask(AskRequest("How do protein coronas form?", scope=Scope(source="datastore")))


def test_search_refuses_an_unknown_source_with_the_same_words(offline_engine: Engine) -> None:
    with pytest.raises(Exception, match=r"Unknown search source 'pes2o'"):
        offline_engine.search("protein corona", source="pes2o")


def test_a_paper_named_by_id_prefix_is_resolved_and_answered_from(offline_engine: Engine, paper: str) -> None:
    request = AskRequest("How do proteins adsorb on lipid nanoparticles?", mode="digest",
                         scope=Scope(source="library", doc_ids=(paper[:8],), label="Selected papers (1)"))
    answer = offline_engine.ask(request)
    assert answer.mode in (AnswerMode.DIGEST, AnswerMode.NO_EVIDENCE)
    assert {r.doc_id for r in answer.references} <= {paper}
    saved = offline_engine.answer(answer.id)  # the service saved it, with the scope as the user named it
    assert saved.text == answer.text and dict(saved.settings)["scope"] == "Selected papers (1)"
    assert [a.id for a in offline_engine.answers()] == [answer.id]


def test_an_unsaved_request_leaves_the_history_alone(offline_engine: Engine, paper: str) -> None:
    offline_engine.ask(AskRequest("How do proteins adsorb on lipid nanoparticles?", mode="digest",
                                  options=RequestOptions(save=False)))
    assert offline_engine.answers() == []


def test_a_plain_string_is_a_request_with_the_defaults(offline_engine: Engine, paper: str) -> None:
    settings = offline_engine.settings
    # No mode in the request: the settings' digest preference decides.
    offline_engine.settings = replace(settings, generation=replace(settings.generation, digest=True))
    answer = offline_engine.ask("How do proteins adsorb on lipid nanoparticles?")
    assert answer.mode in (AnswerMode.DIGEST, AnswerMode.NO_EVIDENCE)
    assert dict(answer.settings)["mode"] == "digest"


def test_the_cli_reports_a_bad_scope_in_the_requests_own_words(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from engine.cli.main import main

    home = str(tmp_path / "cli-home")
    assert main(["--home", home, "ask", "How do protein coronas form?", "--digest", "--doc", "deadbeef"]) == 1
    assert "'deadbeef' is not in the library" in capsys.readouterr().err
    assert main(["--home", home, "ask", "How do protein coronas form?", "--digest", "--source", "pes2o"]) == 1
    assert "Unknown search source 'pes2o'" in capsys.readouterr().err


def test_an_option_is_taken_only_as_spelled_in_full(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """By prefix, "--mode digest" was read as "--model digest" and failed on a model file named "digest"."""
    from engine.cli.main import main

    with pytest.raises(SystemExit) as refused:
        main(["--home", str(tmp_path / "cli-home"), "ask", "How do protein coronas form?", "--mode", "digest"])
    assert refused.value.code == 2
    error = capsys.readouterr().err
    assert "unrecognized arguments: --mode digest" in error and "model file" not in error
