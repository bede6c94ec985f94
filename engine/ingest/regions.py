"""What each block of a page is: running text, a figure or table caption, a table body, or figure text.

Captions, tables and the labels drawn inside figures sit between the paragraphs of the running
text on the page; read in place they land in the middle of sentences ("...a non-electrophilic
analog of [Figure 2 legend] ARS1620 (Figure 2E)"). They are told apart here from the words'
boxes alone (no second pass over the page, which would halve ingest speed):

* a caption starts with its label ("Figure 2.", "Fig. 3 |", "Table 1:", "Extended Data Fig. 4")
  and goes on over the blocks right below it that are set in the same type;
* running text is set in lines as wide as the column; headings are short lines followed by it,
  and a short block that carries on the line above is the end of a paragraph;
* what is left is short lines scattered over a region: a table's cells (rows with wide gaps or
  mostly numbers, or near a "Table" caption) or a figure's labels.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from engine.ingest.layout import Block, Line
from engine.text.scripts import RIGHT_TO_LEFT, word_script

TEXT, CAPTION, TABLE, FIGURE = "text", "caption", "table", "figure"

_CAPTION_LABEL = re.compile(
    r"^(?:(?:Extended Data|Supplementary|Supplemental|Appendix)\s+)?"
    r"(?P<what>Fig(?:ure)?s?\.?|FIG(?:URE)?S?\.?|Table|TABLE|Scheme|SCHEME|Chart|Box|Algorithm|ALGORITHM)"
    r"\s*(?:S?\d{1,3}[A-Za-z]?|[IVX]{1,5})(?P<rest>.*)$")
_LABEL_END = re.compile(r"^(\s|[.:|\u2014\u2013\-](\s|$)|$)")
_PUNCT_AFTER_LABEL = re.compile(r"^\s*[.:|\u2014\u2013\-]")
# A line that ends a sentence: a full stop, question or exclamation mark, or a closing quotation mark.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s*$|[”\"]\s*$")
_NUMERIC = re.compile(r"^[(\[]?[-+\u2212\u00b1<>=~]?\d[\d.,:%/\u00b1\u2212\-]*[)\]%*]?[,;]?$")


@dataclass
class _Shape:
    """What classification needs to know about one block."""

    height: float  # median line height
    words: int
    lines: int
    widest: float
    tabular: bool


def caption_label(line: Line, body_height: float) -> str | None:
    """'figure' or 'table' when ``line`` opens a caption, else None.

    "Figure 2 shows ..." opens a sentence of the running text, not a caption: after the number a
    caption has punctuation ("Figure 2.", "Fig. 2 |"), a capitalised title ("Table 1 Data ..."),
    or is set in smaller type than the body.
    """
    match = _CAPTION_LABEL.match(line.text)
    if match is None:
        return None
    rest = match.group("rest")
    next_word = rest.split(maxsplit=1)[0] if rest.strip() else ""
    smaller = body_height > 0 and (line.rect.y1 - line.rect.y0) < 0.93 * body_height
    if not (_PUNCT_AFTER_LABEL.match(rest) or next_word[:1].isupper() or next_word[:1] == "(" or smaller):
        return None
    return TABLE if match.group("what").lower().startswith("tab") else FIGURE


def figure_caption(text: str) -> str | None:
    """The label ("Figure 3", "Extended Data Fig. 2") of a line that opens a figure caption, else None.

    Only the label is checked: the line is already known to open a caption (:func:`caption_label`).
    """
    match = _CAPTION_LABEL.match(text)
    if match is None or match.group("what").lower().startswith(("tab", "algorithm", "box")):
        return None
    # The label stands apart from what follows: "FIG1p-GFP" is a name in a figure's legend, not a caption.
    if not _LABEL_END.match(match.group("rest")):
        return None
    return text[:match.start("rest")].strip()


def _shape(block: Block) -> _Shape:
    heights = sorted(line.rect.y1 - line.rect.y0 for line in block.lines)
    tabular_lines = sum(_is_tabular(line) for line in block.lines)
    return _Shape(heights[len(heights) // 2], sum(len(line.words) for line in block.lines), len(block.lines),
                  max(line.rect.x1 - line.rect.x0 for line in block.lines),
                  tabular_lines >= max(1, 0.5 * len(block.lines)) and tabular_lines > 0)


def _is_tabular(line: Line) -> bool:
    """A table row: cells separated by gaps wider than any word space, or mostly numbers."""
    words = line.words
    if len(words) < 2:
        return False
    if line.wide_gaps >= 2:
        return True
    if len(words) < 3:
        return False
    # A number has a digit: a line with too few digits cannot be mostly numbers (most lines).
    text = line.text
    if sum(map(text.count, "0123456789")) < 0.5 * len(words):
        return False
    return sum(bool(_NUMERIC.match(word[4])) for word in words) >= 0.5 * len(words)


def _side_by_side(block: Block) -> bool:
    """A block whose lines mostly sit beside one another (a grid set one cell per line): never prose."""
    lines = block.lines
    if len(lines) < 4:
        return False
    beside = sum(any(other is not line and other.rect.y0 < line.rect.y1 and line.rect.y0 < other.rect.y1
                     for other in lines) for line in lines)
    return beside >= 0.5 * len(lines)


def column_width(blocks: list[Block], page_width: float) -> float:
    """The width of a full line of running text on this page (its column's width)."""
    widths = sorted(line.rect.x1 - line.rect.x0 for block in blocks for line in block.lines if len(line.words) >= 6)
    return widths[int(0.75 * (len(widths) - 1))] if widths else 0.4 * page_width


def classify_blocks(blocks: list[Block], page_width: float, page_height: float, page_number: int,
                    body_height: float, pitch: float) -> tuple[list[str], set[int]]:
    """Each block's kind (in reading order) and the indexes of blocks that open a caption.

    ``body_height`` is the line height of the page's running text and ``pitch`` its usual
    baseline-to-baseline distance (0 when unknown).
    """
    shapes = [_shape(block) for block in blocks]
    kinds = [TEXT] * len(blocks)
    opens: set[int] = set()
    labels: list[tuple[int, str]] = []  # caption block index, 'figure' or 'table'

    # Captions, and the same-type blocks right below that carry them on.
    index = 0
    while index < len(blocks):
        label = caption_label(blocks[index].lines[0], body_height)
        if label is None:
            index += 1
            continue
        kinds[index] = CAPTION
        opens.add(index)
        labels.append((index, label))
        height = shapes[index].height
        last = blocks[index].rect
        index += 1
        while index < len(blocks):
            block, shape = blocks[index], shapes[index]
            near = 0 <= block.rect.y0 - last.y1 < 1.2 * height and block.rect.x0 < last.x1 and block.rect.x1 > last.x0
            if not near or abs(shape.height - height) > 0.08 * height or shape.tabular or _side_by_side(block):
                break
            if caption_label(block.lines[0], body_height) is not None:
                break
            kinds[index] = CAPTION
            last = block.rect
            index += 1

    # Measured without the captions: a caption set across both columns under a full-page figure
    # would make the page's few lines of running text look like narrow figure labels.
    column = column_width([block for block, kind in zip(blocks, kinds, strict=True) if kind != CAPTION], page_width)

    def is_prose(index: int) -> bool:
        shape = shapes[index]
        return (not shape.tabular and shape.widest >= 0.5 * column
                and shape.words >= 4 * shape.lines) or (shape.widest >= 0.8 * column and not shape.tabular)

    # The title, authors and affiliations of a first page are short lines too: above the first
    # paragraph, in type not much smaller than the body's.
    prose_tops = [blocks[i].rect.y0 for i in range(len(blocks)) if kinds[i] == TEXT and is_prose(i)]
    title_area = min(prose_tops, default=0.0) if page_number == 1 else 0.0
    for index, block in enumerate(blocks):
        if kinds[index] != TEXT or is_prose(index):
            continue
        if (block.rect.y1 <= title_area + 1 and not shapes[index].tabular
                and shapes[index].height >= 0.85 * body_height):
            continue
        if not shapes[index].tabular and (_is_heading(blocks, shapes, kinds, index, body_height, is_prose)
                                          or _carries_on(blocks, kinds, index, body_height, pitch, is_prose)
                                          or _between_prose(blocks, shapes, index, body_height, pitch, is_prose)):
            continue
        kinds[index] = _nearest_label(blocks, labels, index) or (TABLE if shapes[index].tabular else FIGURE)
        if kinds[index] == FIGURE and shapes[index].tabular:
            kinds[index] = TABLE
    return kinds, opens


def _is_heading(blocks: list[Block], shapes: list[_Shape], kinds: list[str], index: int, body_height: float,
                is_prose: Callable[[int], bool], depth: int = 0) -> bool:
    """A short block in body-size (or larger) type with running text starting right below it.

    A sub-heading may come in between ("2 Model" / "2.1 Task Overview" / text); a stack of short
    blocks with no running text under it (a figure's axis labels) is no heading.
    """
    shape = shapes[index]
    if shape.lines > 3 or shape.words > 16 or (body_height and shape.height < 0.9 * body_height):
        return False
    first = blocks[index].lines[0].text[:1]
    if not (first.isupper() or first.isdigit()):
        return False
    rect = blocks[index].rect
    for later in range(index + 1, len(blocks)):
        if kinds[later] != TEXT:
            continue
        below = blocks[later].rect
        if below.x1 <= rect.x0 or below.x0 >= rect.x1:
            continue
        if not 0 <= below.y0 - rect.y1 < 3 * shape.height:
            return False
        return is_prose(later) or (depth < 1 and _is_heading(blocks, shapes, kinds, later, body_height,
                                                             is_prose, depth + 1))
    return False


def _between_prose(blocks: list[Block], shapes: list[_Shape], index: int, body_height: float, pitch: float,
                   is_prose: Callable[[int], bool]) -> bool:
    """A displayed formula or a short list item in body-size type, with running text right above and below."""
    if body_height <= 0 or shapes[index].height < 0.9 * body_height or shapes[index].lines > 4:
        return False
    rect = blocks[index].rect
    reach = 2.5 * (pitch or 1.5 * body_height)

    def near(other: int, above: bool) -> bool:
        box = blocks[other].rect
        gap = rect.y0 - box.y1 if above else box.y0 - rect.y1
        return box.x0 < rect.x1 and box.x1 > rect.x0 and -2 < gap < reach and is_prose(other)

    return (any(near(i, True) for i in range(max(0, index - 2), index))
            and any(near(i, False) for i in range(index + 1, min(len(blocks), index + 3))))


def _carries_on(blocks: list[Block], kinds: list[str], index: int, body_height: float, pitch: float,
                is_prose: Callable[[int], bool]) -> bool:
    """A short block that is the next line of the running text just above it (a paragraph's end).

    In type smaller than the body's it carries on only a paragraph set in that same type (a quotation
    or a boxed summary: "... logically entailed by" / "the source document”"), never a stack of short
    lines (a table's cells in small type each carry on the one above)."""
    previous_index = next((i for i in range(index - 1, -1, -1) if kinds[i] == TEXT), None)
    if previous_index is None:
        return False
    previous = blocks[previous_index]
    above, line = previous.lines[-1].rect, blocks[index].lines[0].rect
    height = above.y1 - above.y0
    if height <= 0:
        return False
    small = body_height and (line.y1 - line.y0) < 0.9 * body_height
    if small and not (is_prose(previous_index) and len(previous.lines) >= 2
                      and abs((line.y1 - line.y0) - height) <= 0.1 * height
                      and _SENTENCE_END.search(blocks[index].lines[-1].text)):
        return False
    step = line.y1 - above.y1
    if not 0 < step <= 1.3 * (pitch or 1.5 * height):
        return False
    if word_script(blocks[index].lines[0].text) in RIGHT_TO_LEFT:  # a paragraph's last line ends at the right
        return -1.5 <= line.x1 - above.x1 <= 3 * height
    return -3 * height <= line.x0 - above.x0 <= 1.5


def _nearest_label(blocks: list[Block], labels: list[tuple[int, str]], index: int) -> str | None:
    """The kind named by the nearest caption overlapping this block's columns, if any is near."""
    rect = blocks[index].rect
    best: tuple[float, str] | None = None
    for caption_index, label in labels:
        other = blocks[caption_index].rect
        if other.x1 <= rect.x0 or other.x0 >= rect.x1:
            continue
        distance = max(other.y0 - rect.y1, rect.y0 - other.y1, 0.0)
        if best is None or distance < best[0]:
            best = (distance, label)
    return best[1] if best is not None else None
