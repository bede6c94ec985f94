"""Characters of fonts that name their glyphs wrongly are put right, and only in those fonts."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.pdfs import renamed_font_pdf

from engine.ingest.glyphs import _repaired_texts, base_font_name, font_fixes
from engine.ingest.pipeline import parse_pdf


def passage_text(path: Path) -> str:
    return " ".join(passage.text for passage in parse_pdf(path).passages)


def test_a_plus_minus_drawn_as_five_is_read_as_plus_minus(tmp_path: Path) -> None:
    runs = [("stiffness 1398", False), ("5", True), ("412 Pa (n 5 cells)", False)]
    pdf = renamed_font_pdf(tmp_path / "mean.pdf", runs, "AdvPS586D")
    text = passage_text(pdf)
    assert "1398 ± 412 Pa" in text
    assert "(n 5 cells)" in text  # the same character in the body font is a five


def test_an_equals_sign_drawn_as_a_quarter_is_read_as_equals(tmp_path: Path) -> None:
    pdf = renamed_font_pdf(tmp_path / "eq.pdf", [("with n", False), ("¼", True), ("562 patients", False)], "AdvP4C4E74")
    assert "with n = 562 patients" in passage_text(pdf)


def test_the_same_codes_in_an_unknown_font_are_left_alone(tmp_path: Path) -> None:
    pdf = renamed_font_pdf(tmp_path / "plain.pdf", [("with n", False), ("¼ 5", True), ("done", False)], "TimesLike")
    assert "5" in passage_text(pdf) and "±" not in passage_text(pdf)


def test_subset_prefixes_are_stripped_and_ligatures_of_advent_opentype_fonts_are_spelled() -> None:
    assert base_font_name("ABCDEF+AdvP4C4E74") == "AdvP4C4E74"
    assert base_font_name("AdvOT999035f4+e1") == "AdvOT999035f4+e1"  # "+e1" is part of the name
    assert font_fixes("AdvOT999035f4+e1")["\ue104"] == "fl"
    assert font_fixes("Helvetica") == {}


def _span(font: str, text: str) -> dict[str, object]:
    return {"font": font, "text": text}


@pytest.mark.parametrize(("spans", "expected"), [
    # A word split across fonts: the ligature in its own font, the rest in the text font.
    ([_span("AdvOT1+e1", "Red \ue104"), _span("AdvOT1", "uorescent protein")],
     {(0, 0, 1): ("\ue104uorescent", "fluorescent")}),
    # Greek from the Symbol font's private-use codes.
    ([_span("Body", "where "), _span("Symbol", "\uf06e\uf03d"), _span("Body", "1/2")],
     {(0, 0, 1): ("\uf06e\uf03d1/2", "ν=1/2")}),
    # A control character ends a word, as it does in PyMuPDF's own word list.
    ([_span("AdvP4C4E74", "21\x04C \u00bc 3")], {(0, 0, 2): ("¼", "=")}),
])
def test_words_are_rebuilt_from_their_characters(spans: list[dict[str, object]],
                                                  expected: dict[tuple[int, int, int], tuple[str, str]]) -> None:
    assert _repaired_texts({"blocks": [{"lines": [{"spans": spans}]}]}) == expected
