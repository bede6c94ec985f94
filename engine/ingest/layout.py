"""Words with boxes -> text lines -> blocks in reading order, for one page.

PyMuPDF gives words with their block and line numbers in content-stream order. Two-column
papers need that order repaired: blocks are split into bands by blocks spanning both columns;
inside a band the left column is read before the right one.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from engine.types import Rect

# Words arrive as PyMuPDF tuples: (x0, y0, x1, y1, text, block_no, line_no, word_no).
RawWord = tuple[float, float, float, float, str, int, int, int]

_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl",
                            "ﬅ": "st", "ﬆ": "st", "\u00ad": "", "\u200b": ""})


@dataclass
class Line:
    """One text line: its words as (text, box) pairs, its box, and PyMuPDF's block number."""

    words: list[tuple[str, Rect]]
    rect: Rect
    block_no: int

    @property
    def text(self) -> str:
        return " ".join(text for text, _ in self.words)


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


# TeX PDFs often draw an accent as a separate spacing character before its letter ("Lemaˆıtre").
_SPACING_ACCENT = re.compile("([\u00b4\u02c6\u00a8\u02dc\u02c7\u00b8\u02d8\u02da`])([A-Za-z\u0131])")
_COMBINING = {"\u00b4": "\u0301", "\u02c6": "\u0302", "\u00a8": "\u0308", "\u02dc": "\u0303",
              "\u02c7": "\u030c", "\u00b8": "\u0327", "\u02d8": "\u0306", "\u02da": "\u030a", "`": "\u0300"}


def _combine_accent(match: re.Match[str]) -> str:
    letter = "i" if match.group(2) == "\u0131" else match.group(2)
    return letter + _COMBINING[match.group(1)]


def clean_word(text: str) -> str:
    """Expand ligatures, join TeX's detached accents, drop invisible characters."""
    if text.isascii():
        return text
    text = _SPACING_ACCENT.sub(_combine_accent, text.translate(_LIGATURES))
    return unicodedata.normalize("NFKC", text)


def build_lines(raw_words: list[RawWord]) -> list[Line]:
    """Group words into lines by PyMuPDF's (block, line) numbers; skip rotated text."""
    lines: list[Line] = []
    current_key: tuple[int, int] | None = None
    words: list[tuple[str, Rect]] = []
    lx0 = ly0 = lx1 = ly1 = 0.0
    block_of_line = 0
    for x0, y0, x1, y1, text, block_no, line_no, _ in raw_words:
        # Side stamps (arXiv ids, line numbers turned 90 degrees) give tall, narrow word boxes.
        if (y1 - y0) > 2.5 * (x1 - x0) and len(text) > 2:
            continue
        if not text.isascii():
            text = clean_word(text)
            if not text.strip():
                continue
        key = (block_no, line_no)
        if key != current_key:
            if words:
                lines.append(Line(words, Rect(lx0, ly0, lx1, ly1), block_of_line))
            words = []
            current_key = key
            block_of_line = block_no
            lx0, ly0, lx1, ly1 = x0, y0, x1, y1
        else:
            if x0 < lx0:
                lx0 = x0
            if y0 < ly0:
                ly0 = y0
            if x1 > lx1:
                lx1 = x1
            if y1 > ly1:
                ly1 = y1
        words.append((text, Rect(x0, y0, x1, y1)))
    if words:
        lines.append(Line(words, Rect(lx0, ly0, lx1, ly1), block_of_line))
    return lines


def _group_blocks(lines: list[Line]) -> list[Block]:
    blocks: list[Block] = []
    by_number: dict[int, Block] = {}
    for line in lines:
        block = by_number.get(line.block_no)
        if block is None:
            block = Block([], line.rect)
            by_number[line.block_no] = block
            blocks.append(block)
        else:
            block.rect = block.rect.union(line.rect)
        block.lines.append(line)
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


def layout_page(number: int, width: float, height: float, raw_words: list[RawWord]) -> PageLayout:
    """Turn one page's raw words into lines in reading order."""
    blocks = reading_order(_group_blocks(build_lines(raw_words)), width)
    lines: list[Line] = []
    block_starts: set[int] = set()
    for block in blocks:
        block_starts.add(len(lines))
        lines.extend(block.lines)
    return PageLayout(number, width, height, lines, block_starts)


# --- running headers, footers and page numbers -------------------------------------------

_PAGE_NUMBER = re.compile(r"^\W*(page\s*)?(\d{1,4}|[ivxlcdm]{1,6})(\s*(of|/)\s*\d{1,4})?\W*$", re.I)
_VENUE_FOOTER = re.compile(r"^(proceedings of|©|\(c\)|copyright|in proceedings)", re.I)
_DIGITS = re.compile(r"\d+")

MARGIN_FRACTION = 0.09


def margin_signature(line: Line) -> str:
    """A line's identity for repetition checks: lower case, numbers blanked."""
    return _DIGITS.sub("#", line.text.lower()).strip()


def in_margin(line: Line, width: float, height: float) -> bool:
    r = line.rect
    return (r.y1 < height * MARGIN_FRACTION or r.y0 > height * (1 - MARGIN_FRACTION)
            or r.x1 < width * 0.08 or r.x0 > width * 0.92)


def is_page_furniture(line: Line, width: float, height: float, repeated: set[str]) -> bool:
    """True for running headers/footers, page numbers and margin line numbers."""
    if not in_margin(line, width, height):
        return False
    text = line.text
    if _PAGE_NUMBER.match(text):
        return True
    if line.rect.y0 > height * (1 - MARGIN_FRACTION) and _VENUE_FOOTER.match(text):
        return True
    return margin_signature(line) in repeated
