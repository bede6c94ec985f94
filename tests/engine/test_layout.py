"""Page layout on hand-made word lists: lines, reading order, paragraphs, footnotes, page furniture.

Words are PyMuPDF tuples (x0, y0, x1, y1, text, block, line, word) on a 600 x 800 point page.
"""

from __future__ import annotations

import pytest

from engine.ingest.layout import (
    Line,
    build_lines,
    clean_word,
    in_margin,
    is_page_furniture,
    layout_page,
    margin_signature,
)
from engine.ingest.pipeline import section_change
from engine.types import Rect

WIDTH, HEIGHT = 600.0, 800.0
RawWord = tuple[float, float, float, float, str, int, int, int]


def line_words(text: str, x: float, y: float, block: int, line: int = 0, size: float = 10.0) -> list[RawWord]:
    """One line of words from ``x`` at top ``y``: 5pt per character, 4pt between words."""
    words: list[RawWord] = []
    for number, word in enumerate(text.split()):
        width = 5.0 * len(word)
        words.append((x, y, x + width, y + size, word, block, line, number))
        x += width + 4.0
    return words


def paragraph(lines: list[str], x: float, y: float, block: int, pitch: float = 12.0,
              size: float = 10.0) -> list[RawWord]:
    return [w for i, text in enumerate(lines) for w in line_words(text, x, y + pitch * i, block, i, size)]


def texts(lines: list[Line]) -> list[str]:
    return [line.text for line in lines]


def a_line(text: str, y: float, x: float = 60.0) -> Line:
    [line] = build_lines(line_words(text, x, y, 0))
    return line


# --- words and lines ----------------------------------------------------------------------


def test_words_group_into_lines_with_their_boxes() -> None:
    lines = build_lines(paragraph(["Two words", "and three more"], 50, 100, block=0))
    assert texts(lines) == ["Two words", "and three more"]
    assert lines[0].rect == Rect(50, 100, 50 + 15 + 4 + 25, 110)
    assert lines[1].words[0][:5] == (50, 112, 65, 122, "and")


@pytest.mark.parametrize(("raw", "clean"), [
    ("scientiﬁc", "scientific"), ("ﬂow", "flow"), ("eﬀect", "effect"), ("oﬃce", "office"),
    ("Lemaˆıtre", "Lemaître"), ("P´erez", "Pérez"), ("co\u00adoperate", "cooperate"),
    ("˙a2", "ȧ2"), ("x˙", "x\u0307"),  # a stray spacing accent never leaves a space inside a word
    ("plain", "plain"),
])
def test_clean_word(raw: str, clean: str) -> None:
    assert clean_word(raw) == clean
    assert not any(ch.isspace() for ch in clean_word(raw))


def test_rotated_side_stamp_is_dropped() -> None:
    # arXiv's stamp: words stacked bottom to top in the left margin, each box tall and narrow.
    stamp: list[RawWord] = [(10, 390, 37, 560, "arXiv:2203.00130v1", 9, 0, 0), (10, 320, 37, 384, "[cs.HC]", 9, 0, 1),
                            (10, 290, 37, 311, "28", 9, 0, 2), (10, 256, 37, 286, "Feb", 9, 0, 3)]
    body = line_words("Body text stays.", 60, 300, 0)
    assert texts(build_lines(body + stamp)) == ["Body text stays."]


def test_short_narrow_words_are_not_taken_for_rotated_text() -> None:
    assert texts(build_lines([(60, 100, 63, 111, "I", 0, 0, 0), (60, 120, 63, 131, "l", 1, 0, 0)])) == ["I", "l"]


def test_a_word_box_from_a_broken_font_size_is_brought_back_to_its_line() -> None:
    # MuPDF reports some math fonts at 0.1pt, scaled up: a box 120pt tall whose bottom is right.
    words = paragraph(["the ordinary text of a line"] * 5, 60, 100, block=0)
    words.append((300, 20, 310, 140, "X", 1, 0, 0))
    [*_, broken] = build_lines(words)
    assert broken.rect == Rect(300, 130, 310, 140)


def test_text_drawn_twice_is_read_once() -> None:
    label = line_words("Comparison of Systems", 60, 100, 0)
    shadow = [(x0 + 0.2, y0, x1 + 0.2, y1, text, 1, 0, n) for x0, y0, x1, y1, text, _, _, n in label]
    assert texts(build_lines(label + shadow)) == ["Comparison of Systems"]


# --- reading order ------------------------------------------------------------------------


def two_column_page() -> list[RawWord]:
    """A full-width title, then a left and a right column, each two paragraphs; given right first."""
    left = [f"left column line {i} with enough words to count" for i in range(6)]
    right = [f"right column line {i} with enough words to count" for i in range(6)]
    return (line_words("A Title Across Both Columns Of The Page Goes Here In Large Type", 60, 60, 0)
            + paragraph(right[:3], 320, 120, block=3) + paragraph(right[3:], 320, 170, block=4)
            + paragraph(left[:3], 60, 120, block=1) + paragraph(left[3:], 60, 170, block=2))


def test_two_columns_are_read_left_then_right_after_a_full_width_title() -> None:
    layout = layout_page(1, WIDTH, HEIGHT, two_column_page())
    order = [line.text.split()[0] for line in layout.lines]
    assert order == ["A"] + ["left"] * 6 + ["right"] * 6


def test_a_single_column_page_reads_top_to_bottom() -> None:
    words = paragraph(["second paragraph line"], 60, 200, block=0) + paragraph(["first paragraph line"], 60, 100, 1)
    assert texts(layout_page(1, WIDTH, HEIGHT, words).lines) == ["first paragraph line", "second paragraph line"]


def test_a_stray_number_on_the_right_does_not_make_a_page_two_column() -> None:
    words = (paragraph([f"upper paragraph line {i} of the only column" for i in range(4)], 60, 100, block=0)
             + line_words("17", 520, 200, block=1)
             + paragraph([f"lower paragraph line {i} of the only column" for i in range(4)], 60, 300, block=2))
    order = [line.text.split()[0] for line in layout_page(1, WIDTH, HEIGHT, words).lines]
    assert order == ["upper"] * 4 + ["17"] + ["lower"] * 4  # by height, not left column first


# --- paragraphs ---------------------------------------------------------------------------


def test_one_line_blocks_at_the_usual_pitch_are_one_paragraph() -> None:
    # ACM's templates put every line in a block of its own; indents start the paragraphs.
    lines = ["A first paragraph that runs", "over three lines of text", "before it ends.",
             "An indented second one", "goes on at the margin", "and ends."]
    words = [w for i, text in enumerate(lines)
             for w in line_words(text, 70 if i == 3 else 60, 100 + 13.7 * i, block=i)]
    layout = layout_page(1, WIDTH, HEIGHT, words)
    assert layout.block_starts == {0, 3}


def test_a_heading_with_space_above_starts_a_block() -> None:
    words = (paragraph(["body text line one", "body text line two"], 60, 100, block=0)
             + line_words("2 Method", 60, 140, block=1) + paragraph(["more body text", "and more"], 60, 154, 2))
    assert layout_page(1, WIDTH, HEIGHT, words).block_starts == {0, 2, 3}


# --- footnotes ----------------------------------------------------------------------------


def page_with_footnote(marker: str = "2", size: float = 8.0) -> list[RawWord]:
    left = [f"left column body line {i} of the page" for i in range(30)]
    right = [f"right column body line {i} of the page" for i in range(30)]
    return (paragraph(left, 60, 80, block=0) + paragraph(right, 320, 80, block=1)
            + paragraph([f"{marker}A footnote in small type", "that continues here"], 60, 700, block=2,
                        pitch=9.0, size=size))


def test_a_footnote_at_the_foot_of_the_left_column_is_read_after_the_page() -> None:
    layout = layout_page(1, WIDTH, HEIGHT, page_with_footnote())
    assert layout.footnote_lines == 2
    assert layout.lines[-2].text.startswith("2A footnote")
    assert layout.lines[29].text.startswith("left column body line 29")
    assert layout.lines[30].text.startswith("right column body line 0")


def test_a_footnote_whose_marker_makes_it_look_full_size_is_still_found() -> None:
    # A raised marker stretches the line box to body height; glued to the text at the foot of
    # the column, it is still a footnote.
    layout = layout_page(1, WIDTH, HEIGHT, page_with_footnote(marker="1", size=10.0))
    assert layout.footnote_lines == 2


def test_a_paragraph_starting_with_a_number_is_not_a_footnote() -> None:
    layout = layout_page(1, WIDTH, HEIGHT, page_with_footnote(marker="3 ", size=10.0))
    assert layout.footnote_lines == 0


# --- page furniture -----------------------------------------------------------------------


@pytest.mark.parametrize(("text", "y"), [
    ("2271", 775), ("iv", 775), ("Page 3 of 12", 20),
    ("Proceedings of the 58th Annual Meeting of the Association", 790),
    ("July 5 - 10, 2020. c\u20dd2020 Association for Computational Linguistics", 790),
    ("© 2023 Copyright held by the owner/author(s).", 785),
])
def test_page_numbers_and_venue_footers_are_furniture(text: str, y: float) -> None:
    assert is_page_furniture(a_line(text, y), WIDTH, HEIGHT, set())


def test_body_text_is_never_furniture_even_if_it_repeats() -> None:
    line = a_line("We repeat ourselves in the middle of the page.", 400)
    assert not in_margin(line, WIDTH, HEIGHT)
    assert not is_page_furniture(line, WIDTH, HEIGHT, {margin_signature(line, HEIGHT)})


def test_a_running_header_is_furniture_when_it_repeats_on_nearby_pages() -> None:
    header = a_line("CHI ’23, April 23–28, 2023, Hamburg, Germany", 40)
    assert not is_page_furniture(header, WIDTH, HEIGHT, set())
    same_on_page_7 = margin_signature(a_line("CHI ’23, April 23–28, 2023, Hamburg, Germany", 40), HEIGHT)
    assert is_page_furniture(header, WIDTH, HEIGHT, {same_on_page_7})
    assert margin_signature(a_line("Smith et al. 2019 page 12", 40)) == "smith et al. # page #"


def test_a_lower_running_head_needs_stronger_evidence() -> None:
    # Between 9% and 12% of the height (ACM's running heads): repeated at the same height with
    # real words, or the page's own number; a table row that repeats is not enough.
    title = a_line("Paper Plain: Making Medical Research Papers", 80)
    assert in_margin(title, WIDTH, HEIGHT)
    assert is_page_furniture(title, WIDTH, HEIGHT, {margin_signature(title, HEIGHT)})
    assert not is_page_furniture(title, WIDTH, HEIGHT, {margin_signature(a_line(title.text, 84), HEIGHT)})
    assert is_page_furniture(a_line("5", 80, x=500), WIDTH, HEIGHT, set(), page_number=5)
    assert not is_page_furniture(a_line("4", 80, x=500), WIDTH, HEIGHT, set(), page_number=5)
    cell = a_line("0.5", 80)
    assert not is_page_furniture(cell, WIDTH, HEIGHT, {margin_signature(cell, HEIGHT)})


# --- where the reference list starts and ends --------------------------------------------


@pytest.mark.parametrize(("text", "following", "late", "new_block", "starts"), [
    ("References", "Anant K. Agarwal, Ivan Zaitsev, Xuanhui", True, True, True),
    ("7 REFERENCES", "[1] 2019. CHI ’19: Proceedings", True, True, True),
    ("Bibliography", "", True, True, True),
    # Early in a long paper: a table-of-contents entry unless entries follow.
    ("References", "4 Results", False, True, None),
    ("References", "[1] Iz Beltagy, Matthew E Peters, and Arman Cohan.", False, True, True),
    ("References", "Iz Beltagy and Arman Cohan. 2020. Longformer.", False, True, True),
    # A list printed without a heading (RevTeX).
    ("[1] Hu W., Barkana, R., & Gruzinov A. Phys. Rev. Lett.", "", True, True, True),
    ("[1] Hu W., Barkana, R.", "", True, False, None),
    ("[1] Hu W., Barkana, R.", "", False, True, None),
    ("References to prior work are everywhere in this sentence.", "", True, True, None),
])
def test_where_the_reference_list_starts(text: str, following: str, late: bool, new_block: bool,
                                         starts: bool | None) -> None:
    assert section_change(text, following, in_references=False, late=late, new_block=new_block) is starts


@pytest.mark.parametrize(("text", "following", "new_block", "ends"), [
    ("Appendix", "A.1 Details", True, True),
    ("A Supplementary Material", "", True, True),
    ("A", "Multi-LexSum release", True, True),  # the letter set apart from its title
    ("A INTERVIEWS WITH HEALTHCARE CONSUMERS", "Healthcare consumers were recruited", True, True),
    ("A", "Smith, J. 2019. A title.", True, None),  # an author's initial, then an entry
    ("A Discourse-Aware Attention Model for Abstractive Summarization.", "", True, None),
    ("A", "Multi-LexSum release", False, None),
])
def test_where_an_appendix_ends_the_reference_list(text: str, following: str, new_block: bool,
                                                   ends: bool | None) -> None:
    assert section_change(text, following, in_references=True, late=True, new_block=new_block) is (
        False if ends else None)
