"""Text as printed: a micro sign set at the code of "m", a drop cap, words drawn with no spaces."""

from __future__ import annotations

from pathlib import Path

import pymupdf
from fixtures.pdfs import renamed_font_pdf

from engine.ingest.pipeline import parse_pdf
from engine.types import Passage


def _runs_pdf(path: Path, runs: list[tuple[str, bool]], font_name: str) -> Path:
    """Runs set edge to edge (a Greek letter in its own font inside "10-μm"), then a line of ordinary text."""
    return renamed_font_pdf(path, runs, font_name, fontsize=10, spaced=False,
                            next_line="The beads were washed in buffer and counted under the microscope.")


def _passages(path: Path) -> list[Passage]:
    return list(parse_pdf(path).passages)


def _text(path: Path) -> str:
    return " ".join(passage.text for passage in _passages(path))


def _has_boxes(passages: list[Passage]) -> bool:
    return all(len(passage.words) == len(passage.text.split()) for passage in passages)


def test_a_lone_m_in_a_symbol_font_between_a_number_and_a_unit_is_a_micro_sign(tmp_path: Path) -> None:
    runs = [("barcoded 10-", False), ("m", True), ("m microparticles", False)]
    pdf = _runs_pdf(tmp_path / "micro.pdf", runs, "AdvPS9E0F12")
    passages = _passages(pdf)
    text = " ".join(passage.text for passage in passages)
    assert "10-μm microparticles" in text
    assert _has_boxes(passages)


def test_the_greek_font_of_science_papers_reads_as_greek(tmp_path: Path) -> None:
    runs = [("with 200 ", False), ("m", True), ("g/ml of antibody", False)]
    assert "200 μg/ml of antibody" in _text(_runs_pdf(tmp_path / "science.pdf", runs, "AdvTTcd7bcd39"))


def test_a_variable_m_in_a_math_italic_font_stays_m(tmp_path: Path) -> None:
    runs = [("a margin of 1 ", False), ("m", True), ("m wide", False)]
    text = _text(_runs_pdf(tmp_path / "math.pdf", runs, "CMMI10"))
    assert "μ" not in text and "1 mm wide" in text


_BODY = ["most cells are geared toward the control of infection, some",
         "are not and they stay in the tissue for many weeks after it,",
         "which is what this study measured in three groups of mice",
         "and in two groups of patients who had been treated before."]


def _drop_cap_pdf(path: Path, cap: str, first: str) -> Path:
    """A paragraph opening with a drop cap: ``cap`` set large beside its first three lines."""
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 100), "Introduction", fontsize=12)
    page.insert_text((72, 160), cap, fontsize=40)
    lines = [f"{first} {_BODY[0]}", *_BODY[1:]]
    for number, line in enumerate(lines):
        x = 102 if number < 3 else 72
        page.insert_text((x, 132 + 12 * number), line, fontsize=10)
    document.save(path)
    document.close()
    return path


def test_a_drop_cap_is_joined_to_the_word_it_begins(tmp_path: Path) -> None:
    passages = _passages(_drop_cap_pdf(tmp_path / "cap.pdf", "A", "lthough"))
    text = " ".join(passage.text for passage in passages)
    assert "Although most cells are geared" in text
    assert " lthough" not in f" {text}"
    assert _has_boxes(passages)
    box = next(word for passage in passages for word in passage.words
               if passage.text[int(word.start):int(word.end)] == "Although").rect
    assert box.x0 < 80 and box.y1 - box.y0 < 15  # from the capital's left edge, at the line's height


def test_a_drop_cap_that_is_a_word_by_itself_stays_a_word(tmp_path: Path) -> None:
    text = _text(_drop_cap_pdf(tmp_path / "a.pdf", "A", "recent"))
    assert "A recent most cells" in text
