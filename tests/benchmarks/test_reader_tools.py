"""The measuring tools that choose a reader: the opening replay, its packed captures, the sentence BM25, the
rewording filter, and what the reader check's typeset PDFs show. A wrong replay would choose a reader on figures
that are not the product's."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from opening_rows import opening_rate, read_packed, replay_top, write_packed
from reader_paraphrase import clean
from sentence_bm25 import Bm25, bm25_order


def candidate(reader: float, hand: float, rank: int, *, relevant: bool = True, states: bool = False) -> dict:
    return {"read_text": f"sentence {rank}", "reader": reader, "hand": hand, "hand_rank": rank,
            "relevant": relevant, "states": states}


def test_replay_ranks_by_reader_plus_weighted_hand() -> None:
    question = {"candidates": [candidate(2.0, 0.1, 0), candidate(1.0, 0.2, 1, states=True)]}
    assert not replay_top(question, "reader", 0.0, None)  # the reader alone prefers the first
    assert replay_top(question, "reader", 20.0, None)  # 1.0 + 4.0 beats 2.0 + 2.0


def test_replay_leaves_unread_sentences_behind_every_read_one() -> None:
    question = {"candidates": [candidate(0.0, 0.5, 0), candidate(9.0, 0.1, 5, states=True)]}
    assert replay_top(question, "reader", 1.0, None)
    assert not replay_top(question, "reader", 1.0, 2)  # rank 5 is not read at a limit of 2


def test_replay_opens_only_with_relevant_sentences() -> None:
    question = {"candidates": [candidate(9.0, 0.9, 0, relevant=False, states=True), candidate(0.0, 0.1, 1)]}
    assert not replay_top(question, "reader", 1.0, None)
    assert not replay_top({"candidates": [candidate(1.0, 1.0, 0, relevant=False)]}, "reader", 1.0, None)


def test_opening_rate_counts_questions() -> None:
    right = {"candidates": [candidate(1.0, 0.0, 0, states=True)]}
    wrong = {"candidates": [candidate(1.0, 0.0, 0)]}
    assert opening_rate([right, wrong, wrong, right], "reader", 1.0, 32) == 0.5
    assert opening_rate([], "reader", 1.0, 32) == 0.0


def test_packed_captures_keep_what_a_replay_needs(tmp_path: Path) -> None:
    captured = {"question": "Which?", "source": "check", "gold": "x",
                "candidates": [{**candidate(1.0, 0.3, 0, states=True), "text": "shown", "answer": 0.4}]}
    path = tmp_path / "openings.json.gz"
    write_packed({"check": [captured]}, path)
    packed = read_packed(path)["check"][0]
    assert packed["question"] == "Which?" and set(packed["candidates"][0]) == {
        "read_text", "hand", "hand_rank", "relevant", "states"}
    packed["candidates"][0]["new"] = 0.0
    assert replay_top(packed, "new", 1.0, 32)


def test_bm25_prefers_the_rarer_shared_word() -> None:
    texts = ["the virus binds the receptor", "the virus spreads", "the virus replicates", "ferrets were infected"]
    assert bm25_order("Which receptor does the virus bind?", texts)[0] == 0
    assert bm25_order("Were ferrets infected?", texts)[0] == 3
    assert 1 not in Bm25(texts).scores("ferrets")  # a text sharing no word scores nothing


def test_a_rewording_must_change_the_question() -> None:
    original = "What type of test was initially developed to screen for SARS-CoV-2?"
    assert clean("What was the first test used to detect SARS-CoV-2?", original)
    assert clean("Reworded question: What was the first assay for SARS-CoV-2?", original) == (
        "What was the first assay for SARS-CoV-2?")
    assert clean(original, original) is None  # every word kept
    assert clean("What was it?\nWhy?", original) is None
    assert clean("Tell me about the first test", original) is None


def test_coverage_finds_text_a_typeset_pdf_does_not_show(tmp_path: Path) -> None:
    """The COVID-QA check typesets its papers with PyMuPDF's Story a page at a time; with its paragraph style the
    Story may lay the rest of a paper out past the page's foot, and answers there are in no text a reader of the
    PDF can see. The same spacing written as margin-bottom splits every page."""
    import pymupdf
    from opening_fit import CHECK_CSS, typeset
    from reader_check_coverage import SPLITTING_CSS, answer_shown, shown_share

    lines = [f"Paragraph {i} reports that strain {i} grew in {i + 3} days at 37 degrees." for i in range(160)]
    paper = "A title\n\nmetadata\n\n" + "\n".join(lines)
    shown = {}
    for name, css in (("check", CHECK_CSS), ("splitting", SPLITTING_CSS)):
        typeset(paper, tmp_path / f"{name}.pdf", css)
        with pymupdf.open(tmp_path / f"{name}.pdf") as pdf:
            shown[name] = " ".join(page.get_text() for page in pdf)
    body = "\n".join(lines)
    last = body.index("strain 159 grew")
    assert shown_share(body, shown["splitting"]) == 1.0
    assert answer_shown(body, last, "strain 159 grew in 162 days", shown["splitting"])
    assert answer_shown(body, body.index("strain 2 grew"), "strain 2 grew in 5 days", shown["check"])
    if shown_share(body, shown["check"]) < 1.0:  # this PyMuPDF drops the tail: the last answer is not in the PDF
        assert not answer_shown(body, last, "strain 159 grew in 162 days", shown["check"])


def test_coverage_reads_ligatures_as_letters() -> None:
    from reader_check_coverage import shown_share

    shown = "the criteria were fulﬁlled for review by two"
    assert shown_share("criteria were fulfilled for review by two", shown) == 1.0
