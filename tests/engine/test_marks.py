"""Superscript reference marks are cut from the words extraction glues them to; exponents, formulas and a
footnote's opening number (by which the layout knows a footnote) are not."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.pdfs import story_pdf

from engine.ingest.marks import RAISED, RAISED_TEXT, TEXT, cut_marks
from engine.ingest.pipeline import parse_pdf

PAPER = ("<p>Epithelial cells were grown as described<sup>43</sup>. Tight junctions (ZO-1)<sup>20–22</sup> "
         "formed in 10<sup>6</sup> cells per m<sup>2</sup>; the fit had R<sup>2</sup> of 0.9 in cells,<sup>6</sup> "
         "as before, and the area grew with (width)<sup>2</sup>.</p>"
         "<p><sup>7</sup>pronounced stork, as in earlier work on the labelling with <sup>14</sup>C and "
         "<sup>40</sup>Ca.</p>")


def test_reference_marks_are_cut_and_exponents_and_isotopes_stay(tmp_path: Path) -> None:
    text = " ".join(p.text for p in parse_pdf(story_pdf(tmp_path / "marks.pdf", PAPER)).passages)
    for cut in ("grown as described.", "junctions (ZO-1) formed", "in cells, as before"):
        assert cut in text, (cut, text)
    for kept in ("106 cells", "per m2;", "R2 of", "(width)2", "14C", "40Ca", "7pronounced"):
        assert kept in text, (kept, text)
    assert "43" not in text


def kinds(pattern: str) -> list[int]:
    """One kind a character: t text, r raised digit, x raised letter."""
    return [{"t": TEXT, "r": RAISED, "x": RAISED_TEXT}[c] for c in pattern]


@pytest.mark.parametrize(("word", "pattern", "expected"), [
    ("described43.", "tttttttttrrt", "described."),
    ("al.,52", "ttttrr", "al.,"),
    ("3b)40.", "tttrrt", "3b)."),
    ("5It", "rtt", "5It"),              # a footnote's number: the layout reads footnotes by it
    ("SE43", "ttrr", "SE43"),           # an all-capital name: "SE43" may be its name
    ("mm2", "ttr", "mm2"),              # a unit squared
    ("(width)2,", "tttttttrt", "(width)2,"),
    ("amiRCWC15", "ttttxxxrr", "amiRCWC15"),  # the digits of a raised name
    ("14C", "rrt", "14C"),              # an isotope
    ("MnCl2", "ttttt", "MnCl2"),        # a subscript is not raised
])
def test_a_mark_is_cut_only_where_it_cannot_belong_to_the_word(word: str, pattern: str, expected: str) -> None:
    assert cut_marks(word, kinds(pattern)) == expected


SPECTER = Path(__file__).resolve().parents[2] / "resources" / "demo" / "2020.acl-main.207.pdf"


def test_the_specter_papers_marks_go_and_its_footnotes_stay_out_of_the_sentences_they_interrupt() -> None:
    text = " ".join(" ".join(p.text.split()) for p in parse_pdf(SPECTER).passages)
    assert "outperforms a variety of competitive baselines on the benchmark." in text  # its footnote 1 was glued
    # Footnote 3 sits at the foot of the column this sentence runs down: it is read after the paragraph, by its
    # opening number, not inside the sentence.
    assert "whether its advantages on the offline dataset translate into improvements" in text
