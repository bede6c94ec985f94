"""Words with boxes -> text lines -> blocks in reading order, for one page.

PyMuPDF gives words with their block and line numbers in content-stream order. Two-column
papers need that order repaired: blocks are split into bands by blocks spanning both columns;
inside a band the left column is read before the right one.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import groupby, islice, pairwise
from operator import itemgetter, sub
from typing import Any, cast

from engine.ingest.words import glue_kerned, line_number_words, normalise_line_end_hyphen
from engine.types import Rect

# Words arrive as PyMuPDF tuples: (x0, y0, x1, y1, text, block_no, line_no, word_no).
RawWord = tuple[float, float, float, float, str, int, int, int]
# Lines keep those tuples as they are; only a word whose text or box is repaired becomes a new
# (x0, y0, x1, y1, text) tuple. Either way a word's box is ``word[:4]`` and its text ``word[4]``:
# no Python object is made per word on the way from PyMuPDF to the stored passage.
Word = tuple[Any, ...]
TEXT = 4  # index of a word's text in its tuple
TEXT_KIND = "text"  # a line of running text (the other kinds are in engine.ingest.regions)
MARKS_KIND = "figure"  # regions.FIGURE: a plot's significance marks, whatever block they were set in
# A plot's significance marks ("****", "ns", "†"): never words of running text. Set as a text line of their own,
# often in the block of the paragraph under the plot, they opened its first sentence ("**** **** **** Having ...").
_SIGNIFICANCE = re.compile(r"^(?:[*\u2217\u204e]+|[\u2020\u2021#]+|ns|n\.s\.)$")

_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl",
                            "ﬅ": "st", "ﬆ": "st", "\u00ad": "", "\u200b": ""})


@dataclass(slots=True)
class Line:
    """One text line: its words (see ``Word``), its box, PyMuPDF's block number and its text."""

    words: list[Word]
    rect: Rect
    block_no: int
    text: str  # the words' texts joined by spaces
    wide_gaps: int = 0  # gaps between words wider than 1.5 line heights (table cells)


@dataclass
class Block:
    lines: list[Line] = field(default_factory=list)
    rect: Rect = field(default_factory=lambda: Rect(0, 0, 0, 0))


@dataclass
class PageLayout:
    """One page's text lines in reading order, before running headers are removed."""

    number: int
    width: float
    height: float
    lines: list[Line]
    block_starts: set[int]  # indexes into ``lines`` where a new block (paragraph) begins
    footnote_lines: int = 0  # how many of the last ``lines`` are footnotes, read after the page's text
    kinds: list[str] = field(default_factory=list)  # each line's kind (see engine.types.Passage.kind)
    region_starts: set[int] = field(default_factory=set)  # lines that open a caption

    def margin_lines(self) -> list[int]:
        """Indexes of the lines where running headers, footers and page numbers may sit (see in_margin)."""
        top, bottom = self.height * HEADER_EXTENSION, self.height * (1 - MARGIN_FRACTION)
        left, right = self.width * 0.08, self.width * 0.92
        return [index for index, line in enumerate(self.lines)
                if line.rect.y1 < top or line.rect.y0 > bottom or line.rect.x1 < left or line.rect.x0 > right]


# TeX PDFs often draw an accent as a separate spacing character before its letter ("Lemaˆıtre").
_SPACING_ACCENT = re.compile("([\u00b4\u02c6\u00a8\u02dc\u02c7\u00b8\u02d8\u02d9\u02da\u02dd`])([A-Za-z\u0131])")
_COMBINING = {"\u00b4": "\u0301", "\u02c6": "\u0302", "\u00a8": "\u0308", "\u02dc": "\u0303",
              "\u02c7": "\u030c", "\u00b8": "\u0327", "\u02d8": "\u0306", "\u02d9": "\u0307",
              "\u02da": "\u030a", "\u02dd": "\u030b", "`": "\u0300"}


def _combine_accent(match: re.Match[str]) -> str:
    letter = "i" if match.group(2) == "\u0131" else match.group(2)
    return letter + _COMBINING[match.group(1)]


def clean_word(text: str) -> str:
    """Expand ligatures, join TeX's detached accents, drop invisible characters."""
    if text.isascii():
        return text
    text = _SPACING_ACCENT.sub(_combine_accent, text.translate(_LIGATURES))
    # NFKC spells a stray spacing accent as a space plus a combining mark; a word has no spaces.
    return "".join(unicodedata.normalize("NFKC", text).split())


_LINE_KEY = itemgetter(5, 6)  # a word's (block, line) numbers
_X0, _Y0, _X1, _Y1 = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(3)


def build_lines(raw_words: list[RawWord], page_width: float = 0.0) -> list[Line]:
    """Group words into lines by PyMuPDF's (block, line) numbers; skip rotated text and line numbers.

    With ``page_width`` given, a column of margin line numbers is dropped too.

    Per-word Python work is what ingest speed is made of, so most lines are handled whole: their
    words stay the tuples PyMuPDF made, and only the line is looked at (its box, its text, whether
    it repeats); non-ASCII words are cleaned one by one (ligatures, accents). A line with anything
    else to repair (a box far taller than the page's type, a box taller than it is wide, a word of
    invisible characters only) takes the word-by-word path.
    """
    typical_height = _median_height(raw_words)
    if page_width and (numbers := line_number_words(raw_words, page_width)):
        raw_words = [word for index, word in enumerate(raw_words) if index not in numbers]
    too_tall = 3 * typical_height
    lines: list[Line] = []
    seen: set[tuple[str, int, int]] = set()
    for (block_no, _), group in groupby(raw_words, _LINE_KEY):
        words: list[Word] = list(group)
        first = words[0]
        text = " ".join([word[TEXT] for word in words])
        # Some producers draw text twice (fake bold, figure labels): keep one copy of each line.
        signature = (text, round(first[0]), round(first[3]))
        if signature in seen:
            continue
        seen.add(signature)
        if len(words) == 1:
            x0, y0, x1, y1 = first[:4]
        else:
            x0, y0 = min(map(_X0, words)), min(map(_Y0, words))
            x1, y1 = max(map(_X1, words)), max(map(_Y1, words))
        if y1 - y0 > too_tall > 0 or y1 - y0 > 2.5 * (x1 - x0):
            line = _repaired_line(words, block_no, typical_height)
            if line is not None:
                lines.append(line)
            continue
        if not text.isascii():
            cleaned = [_cleaned(word) for word in words]
            if None in cleaned:  # a word of invisible characters only: the box shrinks
                line = _repaired_line(words, block_no, typical_height)
                if line is not None:
                    lines.append(line)
                continue
            lines.append(_line(cast(list[Word], cleaned), Rect(x0, y0, x1, y1), block_no))
            continue
        lines.append(_line(words, Rect(x0, y0, x1, y1), block_no, text))
    return lines


def _line(words: list[Word], rect: Rect, block_no: int, text: str | None = None) -> Line:
    """A line of ``words`` (``text`` their joined text, if known), kerned words rejoined."""
    height = rect.y1 - rect.y0
    gaps = list(map(sub, map(_X0, islice(words, 1, None)), map(_X1, words)))
    glued = glue_kerned(words, gaps)
    if glued is not words or text is None:
        text = " ".join([word[TEXT] for word in glued])
    # Gaps between glued pieces touch, so they never count as a table's wide gaps.
    wide_gaps = sum(map(max(1.5 * height, 0.15).__lt__, gaps)) if len(gaps) > 1 else 0
    return Line(glued, rect, block_no, text, wide_gaps)


def _cleaned(word: Word) -> Word | None:
    """``word`` with its text cleaned (see :func:`clean_word`); None when nothing visible is left."""
    text = word[TEXT]
    if text.isascii():
        return word
    cleaned = clean_word(normalise_line_end_hyphen(text))
    if not cleaned.strip():
        return None
    return word if cleaned == text else (word[0], word[1], word[2], word[3], cleaned)


def _repaired_line(words: list[Word], block_no: int, typical_height: float) -> Line | None:
    """A line whose words need repairs (see :func:`build_lines`); None when nothing of it is kept."""
    kept: list[Word] = []
    for word in words:
        x0, y0, x1, y1, text = word[:5]
        # Side stamps (arXiv ids, line numbers turned 90 degrees) give tall, narrow boxes about as
        # long as their text.
        if 2.5 * (x1 - x0) < (y1 - y0) <= len(text) * (x1 - x0) and len(text) > 2:
            continue
        repaired = False
        # Words in a font with a broken size matrix (MuPDF reads 0.1pt type, scaled up) get boxes
        # ten times too tall; their bottom is still right, so keep them at the page's usual height.
        if y1 - y0 > 3 * typical_height > 0:
            y0 = y1 - typical_height
            repaired = True
        if not text.isascii():
            cleaned = clean_word(normalise_line_end_hyphen(text))
            if not cleaned.strip():
                continue
            repaired = repaired or cleaned != text
            text = cleaned
        kept.append((x0, y0, x1, y1, text) if repaired else word)
    if not kept:
        return None
    x0, y0 = min(map(_X0, kept)), min(map(_Y0, kept))
    x1, y1 = max(map(_X1, kept)), max(map(_Y1, kept))
    if _is_vertical(kept, x0, y0, x1, y1):
        return None
    return _line(kept, Rect(x0, y0, x1, y1), block_no)


def _median_height(raw_words: list[RawWord]) -> float:
    heights = sorted(map(sub, map(_Y1, raw_words), map(_Y0, raw_words)))
    return heights[len(heights) // 2] if heights else 0.0


def _is_vertical(words: list[Word], x0: float, y0: float, x1: float, y1: float) -> bool:
    """A line of words stacked top to bottom: rotated text such as arXiv's side stamp.

    Short rotated words ("28", "Feb") slip through the per-word test, but together they make a
    line far taller than it is wide, which horizontal text never does.
    """
    return len(words) > 1 and (y1 - y0) > 2.5 * (x1 - x0)


def _group_blocks(lines: list[Line]) -> list[Block]:
    blocks: list[Block] = []
    by_number: dict[int, Block] = {}
    for line in lines:
        block = by_number.get(line.block_no)
        if block is None:
            block = Block([], line.rect)
            by_number[line.block_no] = block
            blocks.append(block)
        block.lines.append(line)
    for block in blocks:
        if len(block.lines) > 1:
            rects = [line.rect for line in block.lines]
            block.rect = Rect(min(map(_X0, rects)), min(map(_Y0, rects)), max(map(_X1, rects)), max(map(_Y1, rects)))
    return blocks


def reading_order(blocks: list[Block], page_width: float) -> list[Block]:
    """Order blocks for reading: by bands between full-width blocks, left column first."""
    mid = page_width / 2
    slack = 0.03 * page_width

    def column(block: Block) -> str:
        r = block.rect
        if r.x0 < mid - slack and r.x1 > mid + slack:
            return "full"
        return "left" if (r.x0 + r.x1) / 2 < mid else "right"

    columns = [column(b) for b in blocks]
    # A page is two-column only if both columns hold real text, not a stray page number.
    words_in = {"left": 0, "right": 0, "full": 0}
    for block, side in zip(blocks, columns, strict=True):
        words_in[side] += sum(len(line.words) for line in block.lines)
    left_words, right_words = words_in["left"], words_in["right"]
    if min(left_words, right_words) < 20:
        return sorted(blocks, key=lambda b: (round(b.rect.y0), b.rect.x0))

    ordered: list[Block] = []
    band: list[tuple[Block, str]] = []

    def flush() -> None:
        ordered.extend(sorted((b for b, c in band if c == "left"), key=lambda b: b.rect.y0))
        ordered.extend(sorted((b for b, c in band if c == "right"), key=lambda b: b.rect.y0))
        band.clear()

    full_blocks = sorted((b for b, c in zip(blocks, columns, strict=True) if c == "full"), key=lambda b: b.rect.y0)
    side_blocks = sorted(((b, c) for b, c in zip(blocks, columns, strict=True) if c != "full"),
                         key=lambda bc: bc[0].rect.y0)
    side_index = 0
    for full in full_blocks:
        while side_index < len(side_blocks) and side_blocks[side_index][0].rect.y0 < full.rect.y0:
            band.append(side_blocks[side_index])
            side_index += 1
        flush()
        ordered.append(full)
    band.extend(side_blocks[side_index:])
    flush()
    return ordered


# Classifies a page's blocks (in reading order) as text, caption, table or figure text; see
# engine.ingest.regions. Arguments: blocks, page width, height, number, body line height, pitch.
Classifier = Callable[[list[Block], float, float, int, float, float], tuple[list[str], set[int]]]


def layout_page(number: int, width: float, height: float, raw_words: list[RawWord],
                classify: Classifier | None = None) -> PageLayout:
    """Turn one page's raw words into lines in reading order, footnotes last.

    With ``classify``, each line also gets its kind: captions, tables and figure text are marked
    so the caller can keep them out of the running text.
    """
    ordered = reading_order(_group_blocks(build_lines(raw_words, width)), width)
    body_height = _body_line_height(ordered)
    body, footnotes = split_footnotes(ordered, height, body_height)
    blocks = body + footnotes
    pitch = line_pitch([line for block in blocks for line in block.lines])
    block_kinds = [TEXT_KIND] * len(blocks)
    opens: set[int] = set()
    if classify is not None and body:
        if footnotes:
            body_height = _body_line_height(body)
        body_kinds, opens = classify(body, width, height, number, body_height, pitch)
        block_kinds[:len(body)] = body_kinds
    lines: list[Line] = []
    kinds: list[str] = []
    block_starts: set[int] = set()
    region_starts: set[int] = set()
    last_of_kind: dict[str, Line] = {}
    for index, (block, kind) in enumerate(zip(blocks, block_kinds, strict=True)):
        previous = last_of_kind.get(kind)
        if previous is None or not continues_paragraph(previous, block.lines[0], pitch):
            block_starts.add(len(lines))
        if index in opens:
            region_starts.add(len(lines))
        lines.extend(block.lines)
        kinds.extend(MARKS_KIND if classify is not None and kind == TEXT_KIND and marks_only(line) else kind
                     for line in block.lines)
        last_of_kind[kind] = block.lines[-1]
    return PageLayout(number, width, height, lines, block_starts,
                      footnote_lines=sum(len(block.lines) for block in footnotes), kinds=kinds,
                      region_starts=region_starts)


def marks_only(line: Line) -> bool:
    """Whether every word of ``line`` is a significance mark."""
    return bool(line.words) and all(_SIGNIFICANCE.match(word[4]) for word in line.words)


_FOOTNOTE_MARK = re.compile(r"^(\d{1,2}|[*∗†‡§¶])\D")
_GLUED_MARK = re.compile(r"^(\d{1,2}|[*∗†‡§¶])[^\W\d_]")


def split_footnotes(blocks: list[Block], page_height: float,
                    body_height: float | None = None) -> tuple[list[Block], list[Block]]:
    """Separate footnotes from the running text, so they are not read between two columns.

    Left in place, a footnote at the foot of the left column lands mid-sentence (and splits a
    word hyphenated across the columns). A footnote block sits in the lower half of the page and
    starts with a marker ("2SPECTER: ...", "∗Equal contribution"); it is set in smaller type than
    the body, or (when the raised marker makes its line look as tall as body text) the marker is
    glued to the text and nothing but margin furniture lies below it. ``body_height`` is the
    blocks' body line height, when the caller has it.
    """
    if body_height is None:
        body_height = _body_line_height(blocks)
    lower_half = 0.5 * page_height
    if not any(block.rect.y0 > lower_half for block in blocks):
        return blocks, []

    def is_footnote(block: Block) -> bool:
        first = block.lines[0].text
        if body_height <= 0 or block.rect.y0 <= 0.5 * page_height or not _FOOTNOTE_MARK.match(first):
            return False
        if min(line.rect.y1 - line.rect.y0 for line in block.lines) < 0.9 * body_height:
            return True
        return bool(_GLUED_MARK.match(first)) and not any(
            other.rect.y0 > block.rect.y1 and other.rect.y0 < page_height * (1 - MARGIN_FRACTION)
            and other.rect.x0 < block.rect.x1 and other.rect.x1 > block.rect.x0 for other in blocks)

    footnotes = [block for block in blocks if is_footnote(block)]
    moved = {id(block) for block in footnotes}
    return [block for block in blocks if id(block) not in moved], footnotes


def _body_line_height(blocks: list[Block]) -> float:
    """The line height carrying most of the page's words: the body text's."""
    heights: dict[float, int] = {}
    for block in blocks:
        for line in block.lines:
            rect = line.rect
            key = round(rect.y1 - rect.y0, 1)
            heights[key] = heights.get(key, 0) + len(line.words)
    return max(heights, key=heights.__getitem__) if heights else 0.0


def line_pitch(lines: list[Line]) -> float:
    """The page's usual baseline-to-baseline distance between left-aligned lines; 0 if none."""
    rects = [line.rect for line in lines]
    pitches = Counter([round(b.y1 - a.y1) for a, b in pairwise(rects) if -1.5 <= b.x0 - a.x0 <= 1.5 and b.y1 > a.y1])
    return float(pitches.most_common(1)[0][0]) if pitches else 0.0


def continues_paragraph(previous: Line, line: Line, pitch: float) -> bool:
    """True when ``line`` starts a new PyMuPDF block but is simply the next line of the same paragraph.

    Some producers (ACM's templates among them) put every line in a block of its own; treating
    each as a paragraph would break passages mid-sentence. The next line of a paragraph starts
    at the same left edge, or back at the margin after an indented first line (an indent means
    a new paragraph), at the page's usual line pitch (a heading has space above it), in type of
    the same size.
    """
    above, below = previous.rect, line.rect
    height = above.y1 - above.y0
    if pitch <= 0 or height <= 0 or below.y1 <= above.y1 or not -3 * height <= below.x0 - above.x0 <= 1.5:
        return False
    return (abs((below.y1 - above.y1) - pitch) <= 0.15 * pitch
            and 0.8 <= (below.y1 - below.y0) / height <= 1.25)


# --- running headers, footers and page numbers -------------------------------------------

_PAGE_NUMBER = re.compile(r"^\W*(page\s*)?(\d{1,4}|[ivxlcdm]{1,6})(\s*(of|/)\s*\d{1,4})?\W*$", re.I)
_VENUE_FOOTER = re.compile(r"^(proceedings of|©|\(c\)|copyright|in proceedings)", re.I)
# The second line of an ACL-style first-page footer: "July 5 - 10, 2020. c⃝2020 Association for ...".
_COPYRIGHT_YEAR = re.compile(r"(©|c\u20dd|\(c\)|copyright)\s*(19|20)\d\d", re.I)
_DIGITS = re.compile(r"\d+")
_LETTERS = re.compile(r"[^\W\d_]")

MARGIN_FRACTION = 0.09
# Some templates (ACM's) set the running head a little lower. Lines there are page furniture only
# on stronger evidence: repeated at the same height on nearby pages, or the page's own number.
HEADER_EXTENSION = 0.12


def margin_signature(line: Line, height: float | None = None) -> str:
    """A line's identity for repetition checks: lower case, numbers blanked.

    Lines in the header extension also carry their height on the page, so that a table row that
    happens to sit near the top of two nearby pages is not mistaken for a running head.
    """
    signature = _DIGITS.sub("#", line.text.lower()).strip()
    if height is not None and _in_header_extension(line, height):
        signature = f"@{round(line.rect.y0)} {signature}"
    return signature


def _in_core_margin(line: Line, width: float, height: float) -> bool:
    r = line.rect
    return (r.y1 < height * MARGIN_FRACTION or r.y0 > height * (1 - MARGIN_FRACTION)
            or r.x1 < width * 0.08 or r.x0 > width * 0.92)


def _in_header_extension(line: Line, height: float) -> bool:
    return height * MARGIN_FRACTION <= line.rect.y1 < height * HEADER_EXTENSION


def in_margin(line: Line, width: float, height: float) -> bool:
    """True for lines where running headers, footers and page numbers may sit."""
    return _in_core_margin(line, width, height) or _in_header_extension(line, height)


def is_page_furniture(line: Line, width: float, height: float, repeated: set[str],
                      page_number: int | None = None) -> bool:
    """True for running headers/footers, page numbers and margin line numbers."""
    text = line.text
    if not _in_core_margin(line, width, height):
        if not _in_header_extension(line, height):
            return False
        if page_number is not None and text.strip() == str(page_number):
            return True
        return len(_LETTERS.findall(text)) >= 3 and margin_signature(line, height) in repeated
    if _PAGE_NUMBER.match(text):
        return True
    if line.rect.y0 > height * (1 - MARGIN_FRACTION) and (_VENUE_FOOTER.match(text) or _COPYRIGHT_YEAR.search(text)):
        return True
    return margin_signature(line, height) in repeated
