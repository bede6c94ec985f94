"""Captions, tables and figure text kept out of the running text; words repaired from their boxes.

Unit tests on hand-made words, then bad input: real PDFs generated with PyMuPDF (all figures, a
figure spanning two columns, line numbers in the margin, text drawn letter by letter) and the
corpus' table-only page.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from engine.ingest import parse_pdf
from engine.ingest.layout import build_lines
from engine.ingest.regions import FIGURE, TABLE, caption_label
from engine.ingest.words import glue_kerned, line_number_words
from tests.engine.test_layout import line_words
from tests.fixtures.pdfs import (
    all_figures_pdf,
    letter_by_letter_pdf,
    line_numbered_pdf,
    quotation_pdf,
    small_type_cells_pdf,
    two_column_figure_pdf,
)

BODY = "The enzyme was purified from liver extracts and its activity was followed for several hours. "


def text_of(passages: list, kind: str) -> str:
    return "\n".join(p.text for p in passages if p.kind == kind)


# --- captions -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "size", "label"), [
    ("Figure 2. Binding of the antibody", 10.0, FIGURE),
    ("Fig. 3 | Structure of the complex", 10.0, FIGURE),
    ("Extended Data Fig. 4 Sequence alignment", 10.0, FIGURE),
    ("Table 1: Results on the benchmark", 10.0, TABLE),
    ("Table 2 Data collection and refinement statistics", 10.0, TABLE),
    ("Figure 2 shows that the antibody binds", 10.0, None),  # a sentence of the running text
    ("Table 1 presents the main results", 10.0, None),
    ("Figure 5 shows the effect", 8.0, FIGURE),  # ... unless set smaller than the body
])
def test_caption_label(text: str, size: float, label: str | None) -> None:
    [line] = build_lines(line_words(text, 60, 100, 0, size=size))
    assert caption_label(line, body_height=10.0) == label


# --- words from their boxes ----------------------------------------------------------------


def test_words_split_at_kerning_adjustments_are_rejoined() -> None:
    # "comple x f ormed b y": glyphs of one word touch (gap <= 0), real spaces are ~0.2 em wide.
    pieces = [(60.0, 100.0, 89.1, 108.0, "comple"), (88.9, 100.0, 93.0, 108.0, "x"),
              (94.6, 100.0, 97.3, 108.0, "f"), (97.2, 100.0, 120.3, 108.0, "ormed"),
              (122.0, 100.0, 126.4, 108.0, "b"), (126.3, 100.0, 130.3, 108.0, "y")]
    assert [w[4] for w in glue_kerned(pieces)] == ["complex", "formed", "by"]


def test_a_single_overlap_is_not_taken_for_kerning() -> None:
    # An italic word leaning into the next one: one touching pair in the line is not the pattern.
    words = [(60.0, 100.0, 80.0, 108.0, "FoxF"), (79.8, 100.0, 88.0, 108.0, "is"), (90.0, 100.0, 110.0, 108.0, "here")]
    assert [w[4] for w in glue_kerned(words)] == ["FoxF", "is", "here"]


def test_glyphs_that_abut_are_one_word() -> None:
    # "(Figure 6 C)" for 6C and "cA 4" with its subscript: no space between the boxes. A gap of a
    # real space, or a single overlap, keeps the words apart.
    words = [(60.0, 100.0, 88.0, 109.3, "(Figure"), (91.6, 100.0, 96.8, 109.3, "6"),
             (96.82, 100.0, 109.2, 109.3, "C)."), (112.4, 100.0, 130.0, 109.3, "cA"),
             (130.03, 103.0, 133.1, 108.2, "4"), (136.3, 100.0, 150.0, 109.3, "is")]
    assert [w[4] for w in glue_kerned(words)] == ["(Figure", "6C).", "cA4", "is"]
    assert [w[4] for w in glue_kerned(words[:2])] == ["(Figure", "6"]


def test_a_column_of_margin_line_numbers_is_found() -> None:
    raw = []
    for row in range(8):
        raw += line_words(f"{340 + row}", 37, 100 + 14 * row, row, 1)
        raw += line_words("Text of the manuscript line 12 goes here", 72, 100 + 14 * row, row, 0)
    numbers = line_number_words(raw, 595)
    assert sorted(raw[i][4] for i in numbers) == [str(340 + row) for row in range(8)]


# --- bad input: generated PDFs -------------------------------------------------------------


def test_a_pdf_of_figures_only_gives_captions_and_figure_text(tmp_path: Path) -> None:
    parsed = parse_pdf(all_figures_pdf(tmp_path / "figures.pdf", pages=2))
    assert [p.kind for p in parsed.passages if p.kind == "caption"] == ["caption", "caption"]
    assert "Growth of the mutant strain over time." in text_of(parsed.passages, "caption")
    assert "Time (h)" in text_of(parsed.passages, "figure")
    assert not [p for p in parsed.passages if p.kind == "text"]


def test_a_figure_spanning_two_columns_stays_out_of_their_sentences(tmp_path: Path) -> None:
    left = BODY * 7 + "When the buffer was changed the activity rose sharply after"
    right = "calcium was added to the reaction mixture. " + BODY * 7
    caption = "Figure 1: Activity of the enzyme in wild type and mutant cells, measured every hour."
    parsed = parse_pdf(two_column_figure_pdf(tmp_path / "two-column.pdf", left, right, caption))
    text = text_of(parsed.passages, "text")
    # The sentence runs from the foot of the left column to the top of the right one, whole.
    assert "the activity rose sharply after calcium was added to the reaction mixture." in " ".join(text.split())
    assert "Activity of the enzyme" not in text and "Time (h)" not in text and "Mutant" not in text
    assert text_of(parsed.passages, "caption") == caption
    assert "Time (h)" in text_of(parsed.passages, "figure")


def test_a_quotation_in_small_type_keeps_its_last_line(tmp_path: Path) -> None:
    # A quotation's short last line, a block of its own in the quotation's smaller type, was read as figure
    # text: the quote then ran on into the next paragraph ("... logically entailed by We conduct ...").
    path = quotation_pdf(tmp_path / "quotation.pdf", BODY * 4 + "They define a fault as follows:",
                         '"A fault is a statement that contradicts the source document, or is not directly stated, '
                         'heavily implied, or logically entailed by', 'the source document."',
                         "We then measured the rate again. " + BODY * 4)
    with pymupdf.open(path) as document:  # the PDF does keep the last line apart
        blocks = [b for b in document[0].get_text("dict")["blocks"] if b["type"] == 0]
        assert any(["".join(s["text"] for s in line["spans"]) for line in b["lines"]] == ['the source document."']
                   for b in blocks)
    parsed = parse_pdf(path)
    text = " ".join(text_of(parsed.passages, "text").split())
    assert 'or logically entailed by the source document." We then measured the rate again.' in text
    assert not text_of(parsed.passages, "figure")


def test_a_table_of_short_cells_in_small_type_stays_a_table(tmp_path: Path) -> None:
    # The rule above asks for a paragraph above and a sentence's end: cells stacked in small type carry on
    # one another at the same pitch, and none is running text.
    path = small_type_cells_pdf(tmp_path / "cells.pdf", BODY * 4,
                                ["Reagent", "Thermo Fisher", "Cat# F10347", "FxCycle Violet stain."])
    text = text_of(parse_pdf(path).passages, "text")
    assert "Thermo Fisher" not in text and "Cat# F10347" not in text


def test_margin_line_numbers_are_dropped(tmp_path: Path) -> None:
    parsed = parse_pdf(line_numbered_pdf(tmp_path / "numbered.pdf", BODY * 12, first_number=340))
    text = " ".join(p.text for p in parsed.passages)
    assert not any(str(n) in text.split() for n in range(340, 380))
    assert text.count("followed for several hours.") == 12
    # Each number is a word on the page: the test would fail if none were printed.
    with pymupdf.open(tmp_path / "numbered.pdf") as document:
        assert "341" in document[0].get_text().split()


@pytest.mark.parametrize("kerning_spaces", [False, True])
def test_text_drawn_letter_by_letter_reads_as_words(tmp_path: Path, kerning_spaces: bool) -> None:
    path = letter_by_letter_pdf(tmp_path / "letters.pdf", BODY * 3, kerning_spaces=kerning_spaces)
    parsed = parse_pdf(path)
    assert " ".join(" ".join(p.text for p in parsed.passages).split()) == " ".join((BODY * 3).split())
    if kerning_spaces:  # what a plain text extraction makes of it
        with pymupdf.open(path) as document:
            assert "e n z y m e" in document[0].get_text()


# --- bad input: the corpus' table-only page -------------------------------------------------


def test_a_table_only_page_keeps_tables_out_of_the_discussion(papers_dir: Path) -> None:
    parsed = parse_pdf(papers_dir / "1903.10676.pdf")
    kinds = {p.kind for p in parsed.passages}
    assert {"caption", "table row", "text"} <= kinds  # its tables are read as tables: a passage per row
    text = text_of(parsed.passages, "text")
    assert "No prior published SOTA results exist for the Paper Field dataset." in text
    assert "88.857" not in text and "BC5CDR (Li et al., 2016)" not in text
    assert "88.857" in text_of(parsed.passages, "table row")
    assert text_of(parsed.passages, "caption").startswith("Table 1: Test performances of all BERT variants")


def test_a_plots_significance_marks_set_above_a_paragraph_are_figure_text(tmp_path: Path) -> None:
    """One PyMuPDF text insertion is one block: the marks line opens the block of the paragraph under it."""
    document = pymupdf.open()
    page = document.new_page()
    paragraph = ("Having characterized the antibody as a binder of the inhibitor using model antigens, we next "
                 "characterized it in the context of the cell surface and measured its affinity in three lines.")
    words = paragraph.split()
    lines = ["**** **** ns ****"] + [" ".join(words[i:i + 12]) for i in range(0, len(words), 12)]
    page.insert_text((72, 100), lines, fontsize=10, lineheight=1.4)
    path = tmp_path / "marks.pdf"
    document.save(path)
    document.close()
    passages = parse_pdf(path).passages
    text = " ".join(p.text for p in passages if p.kind == "text")
    assert "*" not in text and text.startswith("Having characterized")
    assert any(p.kind == FIGURE and "****" in p.text for p in passages)
