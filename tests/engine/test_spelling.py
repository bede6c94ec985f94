"""Spelling correction of question words, against a real datastore's FTS5 vocabulary.

The datastore is real (imported JSON lines, SQLite FTS5, its fts5vocab table); the hashing
embedder stands in for MiniLM, since correction works on the BM25 index.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.embed import HashingEmbedder
from engine.progress import Progress
from engine.request import AskRequest, RequestOptions
from engine.retrieve.retriever import RetrievalOptions, Retriever
from engine.retrieve.spelling import (
    MAX_SEARCHES,
    SpellingCorrector,
    allowed_edits,
    is_english_word,
    with_corrections,
)
from engine.service import Engine

RECORDS = [
    ("O1", "Cavity optomechanics", "Optomechanical crystals couple light and motion. An optomechanical resonator "
     "cools a mechanical mode with radiation pressure."),
    ("O2", "Optomechanical sensing", "Optomechanical sensors read out tiny forces; the optomechanical coupling "
     "rate sets their sensitivity."),
    ("H1", "Tumour heterogeneity", "Intratumour heterogeneity drives resistance; heterogeneity between cells "
     "shows in single-cell sequencing."),
    ("H2", "Measuring heterogeneity", "Spatial heterogeneity of tissue is mapped by imaging mass cytometry."),
    ("H3", "Cell states", "Transcriptional heterogeneity among clones."),
    ("R1", "Speech transcripts", "Transcripts of meetings are summarised; noisy transcripts hurt summaries."),
    ("R2", "Transcripts at scale", "We align transcripts with audio for ten thousand hours of speech."),
    ("A1", "Head pose estimation", "Head pose estimation from a single image; the head is tracked over frames."),
    ("A2", "Head movement", "Head movement predicts attention in video calls."),
    ("M1", "One-off typo", "A single passage that spells it hetrogeneity once."),
]


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    lines = [json.dumps({"id": i, "title": t, "text": x}) for i, t, x in RECORDS]
    path = tmp_path / "papers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with Engine(home=tmp_path / "home") as opened:
        opened.embedder = HashingEmbedder()
        opened.add_datastore(path, "papers", embed=False)
        yield opened


def corrector(engine: Engine) -> SpellingCorrector:
    return SpellingCorrector(engine.datastore_sources())


def corpus_words(engine: Engine) -> set[str]:
    return {w.lower() for _, title, text in RECORDS for w in re.findall(r"[^\W\d_]+", f"{title} {text}")}


def test_typos_become_the_words_the_papers_use(engine: Engine) -> None:
    found = corrector(engine).corrections("How do optomechincal resonators and hetergeniety relate?")
    assert found == {"optomechincal": "optomechanical", "hetergeniety": "heterogeneity"}
    # Every correction is a word some passage holds, never an invented one.
    assert set(found.values()) <= corpus_words(engine)


def test_known_words_are_left_alone(engine: Engine) -> None:
    speller = corrector(engine)
    # Used by the papers; an English word the papers do not use ("heard" is one edit from "head");
    # too short; not a word at all.
    assert speller.corrections("optomechanical heterogeneity heard") == {}
    assert is_english_word("heard") and not is_english_word("optomechincal")
    assert speller.corrections("hed gpt4o x86") == {}


def test_another_ending_is_another_word_not_a_typo(engine: Engine) -> None:
    # "transcriptase" is two edits from the corpus's "transcripts", both at the end: a different word.
    assert allowed_edits("transcriptase") == 2
    assert corrector(engine).corrections("reverse transcriptase") == {}


def test_a_typo_one_passage_shares_is_still_corrected(engine: Engine) -> None:
    # One passage spells it "hetrogeneity"; three use "heterogeneity": the typed word is still a typo.
    assert corrector(engine).corrections("hetrogeneity of tumours") == {"hetrogeneity": "heterogeneity"}


def test_search_finds_what_the_correct_spelling_finds_and_says_so(engine: Engine) -> None:
    retriever = Retriever(engine.datastore_sources(), None)
    reports: list[Progress] = []
    typed = retriever.search("optomechincal coupling", k=3, progress=reports.append)
    right = retriever.search("optomechanical coupling", k=3)
    assert [h.doc_id for h in typed] == [h.doc_id for h in right]
    assert {h.doc_id for h in typed} == {"O1", "O2"}
    [note] = [p.label for p in reports if p.stage == "spelling"]
    assert "optomechanical" in note and "optomechincal" in note


def test_correction_can_be_switched_off(engine: Engine) -> None:
    options = replace(RetrievalOptions(), spelling=False)
    retriever = Retriever(engine.datastore_sources(), None, options=options)
    reports: list[Progress] = []
    hits = retriever.search("optomechincal", k=3, progress=reports.append)
    assert hits == [] and not [p for p in reports if p.stage == "spelling"]


def test_the_correction_follows_the_typed_word() -> None:
    fixes = {"optomechincal": "optomechanical"}
    assert with_corrections("Optomechincal cooling?", fixes) == "Optomechincal optomechanical cooling?"
    assert with_corrections("unchanged", {}) == "unchanged"


def test_cli_search_prints_the_correction(engine: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    home = str(engine.paths.home)
    engine.close()
    assert main(["--home", home, "search", "optomechincal", "--json", "--no-rewrite"]) == 0
    out, err = capsys.readouterr()
    assert {hit["doc_id"] for hit in json.loads(out)} == {"O1", "O2"}
    assert "also searching for 'optomechanical' (typed 'optomechincal')" in err


def test_asking_with_a_typo_names_the_correction_among_the_stages(engine: Engine) -> None:
    stages: list[str] = []
    engine.ask(AskRequest("How strong is optomechincal coupling?", mode="digest", options=RequestOptions(save=False)),
               on_stage=stages.append)
    assert "also searching for 'optomechanical' (typed 'optomechincal')" in stages


def test_spelling_follows_the_settings_and_the_cli_can_turn_it_off(engine: Engine,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert {h.doc_id for h in engine.search("optomechincal", k=3, rewrite=False)} == {"O1", "O2"}
    assert engine.search("optomechincal", k=3, rewrite=False, spelling=False) == []
    engine.settings = replace(engine.settings, retrieval=replace(engine.settings.retrieval, spelling=False))
    assert engine.search("optomechincal", k=3, rewrite=False) == []
    home = str(engine.paths.home)
    engine.close()
    assert main(["--home", home, "search", "optomechincal", "--json", "--no-rewrite", "--no-spelling"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == [] and "also searching" not in err


def test_a_flood_of_unknown_words_is_searched_for_a_few_corrections_only(engine: Engine) -> None:
    junk = " ".join(f"zqxv{letter}wq" for letter in "abcdefghijklmnop")  # 16 unknown words, no near match
    assert corrector(engine).corrections(f"optomechincal {junk}") == {"optomechincal": "optomechanical"}
    # Past MAX_SEARCHES unknown words a typo is searched as typed: a pasted page costs a bounded time.
    assert MAX_SEARCHES < 16
    assert corrector(engine).corrections(f"{junk} optomechincal") == {}
