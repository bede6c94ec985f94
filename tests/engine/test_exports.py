"""Exports a reference manager accepts: BibTeX parsed back with a BibTeX parser (one entry per paper,
unique readable keys, real titles and years), Markdown bylines, file names from the question, and
datastore records whose title field had the abstract glued on."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from engine.datastore.reader import Record, record_from_json
from engine.datastore.record_title import split_glued_title
from engine.render.bibtex import cite_key, to_bibtex, unique_keys
from engine.render.common import byline, page_list, reference_line
from engine.render.markdown import to_markdown
from engine.types import Answer, AnswerMode, AnswerSentence, Citation, Reference

bibtexparser = pytest.importorskip("bibtexparser")
BUNDLED = Path(__file__).resolve().parents[2] / "resources" / "datastores" / "cs-sample.jsonl.gz"
SPECTER = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"


def _ref(n: int, doc: str, title: str, authors: tuple[str, ...] = (), year: int | None = None, page: int | None = 1,
         source: str = "library", **extra: str) -> Reference:
    return Reference(n, f"{doc}-{n:04d}", doc, source, title, f"Passage {n} of {title}.", page=page,
                     authors=authors, year=year, **extra)


def answer_citing(*references: Reference) -> Answer:
    sentences = tuple(AnswerSentence(f"Claim {r.n} [{r.n}].",
                                     (Citation(r.n, r.passage_id, r.text, 0, len(r.text), 0.9),), True)
                      for r in references)
    return Answer(question="What do these papers say?", text=" ".join(s.text for s in sentences), sentences=sentences,
                  references=references, mode=AnswerMode.WRITTEN)


def test_bibtex_parses_with_one_entry_per_paper_and_unique_readable_keys() -> None:
    cohan = ("Arman Cohan", "Sergey Feldman", "Iz Beltagy", "Doug Downey", "Daniel S. Weld")
    answer = answer_citing(
        _ref(1, "specter", SPECTER, cohan, 2020, page=3, doi="10.18653/v1/2020.acl-main.207"),
        _ref(2, "specter", SPECTER, cohan, 2020, page=6, doi="10.18653/v1/2020.acl-main.207"),
        _ref(3, "rec1", "Document classification {with} 100% & $5 budgets", source="cs-sample",
             page=None, url="https://openreview.net/forum?id=abc_1"),
        _ref(4, "rec2", "Document clustering at scale", source="cs-sample", page=None),
        _ref(5, "lo", "The Semantic Scholar Open Research Corpus", ("Kyle Lo", "Lucy Lu Wang"), 2020),
    )
    parsed = bibtexparser.loads(to_bibtex(answer))
    keys = [entry["ID"] for entry in parsed.entries]
    assert len(parsed.entries) == 4  # SPECTER cited twice is one work
    assert len(set(keys)) == len(keys)
    assert keys[0] == "cohan2020specter" and keys[3] == "lo2020semantic"
    assert all(re.fullmatch(r"[a-z]+[0-9]*[a-z]+", key) for key in keys), keys
    specter = parsed.entries[0]
    assert specter["title"] == SPECTER and specter["year"] == "2020" and specter["ENTRYTYPE"] == "article"
    assert specter["author"].split(" and ")[0] == "Arman Cohan" and specter["doi"].startswith("10.18653/")
    record = parsed.entries[1]
    assert re.sub(r"\\(.)", r"\1", record["title"]) == "Document classification {with} 100% & $5 budgets"
    assert record["url"] == "https://openreview.net/forum?id=abc\\_1"
    assert "year" not in record  # no invented years


def test_keys_stay_unique_when_many_papers_collide() -> None:
    papers = [_ref(n, f"d{n}", "Attention", ("A. Vaswani",), 2017) for n in range(1, 30)]
    keys = unique_keys(papers)
    assert len(set(keys)) == 29 and keys[:3] == ["vaswani2017attention", "vaswani2017attentiona",
                                                 "vaswani2017attentionb"]
    assert cite_key(_ref(1, "x", "Über Gödel's theorem", ("Kurt Gödel",), 1931)) == "godel1931uber"
    assert cite_key(_ref(1, "x", "", ())) == "anonpaper"


def test_markdown_bylines_never_double_the_full_stop() -> None:
    fader = _ref(1, "fader", "Open question answering over curated and extracted knowledge bases",
                 ("Anthony Fader", "Luke Zettlemoyer", "Oren Etzioni"), page=2)
    rendered = to_markdown(answer_citing(fader))
    assert "et al.." not in rendered and "Fader et al., *Open question" in rendered
    assert ".." not in reference_line(fader)
    assert byline(("Cohan, Arman", "Feldman, Sergey"), 2020) == "Cohan and Feldman 2020"
    assert page_list([6, 3, 7, 8, 3]) == "pp. 3, 6-8" and page_list([4]) == "p. 4" and page_list([]) == ""


def test_glued_titles_are_split_from_their_abstract() -> None:
    glued = ("document: V-Net: Fully Convolutional Neural Networks for Volumetric Medical Image Segmentation "
             "Convolutional Neural Networks (CNNs) have been recently employed to solve problems.")
    title, abstract = split_glued_title(glued)
    assert title == "V-Net: Fully Convolutional Neural Networks for Volumetric Medical Image Segmentation"
    assert abstract.startswith("Convolutional Neural Networks (CNNs) have been")
    assert split_glued_title("Attention Is All You Need")[1] == ""
    chess = split_glued_title("document: Mastering Chess and Shogi by Self-Play with a General Reinforcement "
                              "Learning Algorithm The game of chess is the most studied domain.")
    assert chess[0].endswith("Algorithm") and chess[1].startswith("The game")
    record = record_from_json(1, {"id": "x", "title": glued, "text": "Introduction Body."})
    assert isinstance(record, Record) and record.title.endswith("Segmentation")
    assert record.text.startswith("Convolutional Neural Networks (CNNs)") and record.text.endswith("Body.")


def test_the_bundled_sample_datastore_has_no_abstract_for_a_title() -> None:
    titles = []
    with gzip.open(BUNDLED, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            record = record_from_json(number, json.loads(line))
            assert isinstance(record, Record)
            titles.append(record.title)
    assert not [t for t in titles if t.lower().startswith("document:")]
    too_long = [t for t in titles if len(t.split()) > 30]
    assert not too_long, too_long[:3]
