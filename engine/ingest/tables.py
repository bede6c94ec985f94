"""Tables as tables: a table's region, columns, header and body rows, each cell with its text and box.

The layout code (engine.ingest.regions) already tells a table's lines from the running text, from
the words' boxes alone. Where such lines sit next to a "Table N" caption, their region is split
into rows (lines at one height), cells (gaps wider than a word space) and columns (the cells of
the rows with the most cells), from the words ingest already holds: no second pass over the page.
PyMuPDF's and pdfplumber's table finders were measured against this on the same hand-checked
tables (benchmarks/table_structure.py, docs/tables.md) and found far fewer of them. Only pages
that show a table caption and table lines pay for the closer look.

A structure is kept only when it can be trusted: 2 to 300 rows, at least two columns, most cells
filled, and readable text (few replacement or private-use characters, as fonts without a Unicode
map give). Anything else is left
to the caller as text, exactly as before: the table's lines become a "table" passage.

Each body row becomes one passage, the unit that is searched, quoted and cited. Its text carries
the column headers beside each value ("Table 2, row SPECTER: co-view MAP 83.8, co-read MAP 84.5")
and each of its words carries the box of the cell it came from, so a quote of one value outlines
that cell on the page.
"""

from __future__ import annotations

import logging
import re
from array import array
from dataclasses import dataclass, field
from typing import Any

from engine.ingest.layout import PageLayout
from engine.ingest.regions import CAPTION, FIGURE, TABLE
from engine.ingest.table_headers import column_headers, header_rows, is_value, row_gaps
from engine.ingest.table_notes import note_texts, opens_note, table_notes
from engine.types import PageRect, Passage, Rect, TableCell, TableRow, WordBoxes, content_hash, passage_id

log = logging.getLogger(__name__)

TABLE_ROW = "table row"  # the passage kind of one table row

_TABLE_LABEL = re.compile(r"^((?:Supplementary|Supplemental|Extended Data|Appendix)\s+)?(Table|TABLE)\s*"
                          r"(S?\d{1,3}[A-Za-z]?|[IVX]{1,5})\b")
_UNREADABLE = re.compile("[\ufffd\ue000-\uf8ff]")

MAX_ROWS = 300  # more rows than any printed table page holds: a mis-read grid
MIN_FILLED = 0.45  # share of cells that hold text
MAX_UNREADABLE = 0.05  # share of characters that are replacement or private-use codes
SMALLER_TYPE = 0.95  # a footnote's line height under this share of the rows' (the layout set it among them)


@dataclass
class FoundTable:
    """A table found on one page: its caption's label, header texts per column and body rows."""

    page: int
    rect: Rect
    label: str
    caption: str
    headers: list[str]
    rows: list[list[TableCell]]  # body rows, each its non-empty cells
    lines: set[int] = field(default_factory=set)  # indexes of the layout lines the table replaces
    header_cells: list[TableCell] = field(default_factory=list)
    notes: tuple[str, ...] = ()  # the footnotes set under the table, each one's text
    note_lines: set[int] = field(default_factory=set)  # their lines: kept beside the caption, not in the prose


def page_may_hold_tables(layout: PageLayout) -> bool:
    """A caption that names a table and lines the layout took for a table's: worth a closer look."""
    if TABLE not in layout.kinds:
        return False
    return any(layout.kinds[index] == CAPTION and _TABLE_LABEL.match(layout.lines[index].text)
               for index in layout.region_starts)


def find_tables(layout: PageLayout) -> list[FoundTable]:
    """The trusted tables among the lines ``layout`` marks as a table's."""
    found: list[FoundTable] = []
    for region, members in _regions(layout):
        caption_index = _caption_for(layout, region)
        if caption_index is None:
            continue  # table-like lines without a "Table" caption: figure labels, a list of numbers
        label, caption = _caption_text(layout, caption_index)
        kept = _without_notes(layout, members)
        if kept != members:  # notes taken out: the table's box shrinks to the lines left
            region, members = _box(layout, kept), kept
        table = _structure(layout, region, members, label, caption)
        if table is not None:
            notes = table_notes(layout, region, table.lines, _line_height(layout),
                                under=_caption_bottom(layout, caption_index, region))
            table.notes = note_texts(layout, notes)
            table.note_lines = {index for note in notes for index in note}
            found.append(table)
    return found


def _regions(layout: PageLayout) -> list[tuple[Rect, set[int]]]:
    """Groups of the page's table lines that lie together (one per table), with their bounding box."""
    # Short lines the classifier gave to a figure may be a table's columns of numbers: they join a
    # group only through a table's lines.
    groups: list[tuple[Rect, set[int]]] = [(line.rect, {index}) for index, (line, kind)
                                           in enumerate(zip(layout.lines, layout.kinds, strict=True))
                                           if kind in (TABLE, FIGURE)]
    merged = True
    while merged:  # a table's columns may be read one after the other: join groups until none are near
        merged = False
        for first in range(len(groups)):
            for second in range(first + 1, len(groups)):
                if _near(groups[first][0], groups[second][0], layout):
                    box = groups[first][0].union(groups[second][0])
                    groups[first] = (box, groups[first][1] | groups[second][1])
                    del groups[second]
                    merged = True
                    break
            if merged:
                break
    # Lines of another kind inside a table's box are its rows too (a header row read as a heading).
    for box, members in groups:
        for index, line in enumerate(layout.lines):
            if index not in members and layout.kinds[index] != CAPTION and line.rect.within(box, 1.0):
                members.add(index)
    return [(box, members) for box, members in groups
            if len(members) >= 2 and any(layout.kinds[index] == TABLE for index in members)]


def _without_notes(layout: PageLayout, members: set[int]) -> set[int]:
    """``members`` but for footnotes the layout set among the table's lines: a run of lines at its foot,
    each alone at its height and with no gap between cells, the first opening like a note and set in
    smaller type than the table's rows (a wrapped cell's line opening with "a" is as tall as the rows)."""
    ordered = sorted(members, key=lambda index: layout.lines[index].rect.y0)
    heights = sorted(layout.lines[index].rect.y1 - layout.lines[index].rect.y0 for index in members)
    row_height = heights[len(heights) // 2]
    tail: list[int] = []
    for index in reversed(ordered):
        line = layout.lines[index]
        alone = not any(other != index and line.rect.y0 < _middle(layout.lines[other].rect) < line.rect.y1
                        for other in members)
        if not alone or line.wide_gaps:
            break
        tail.insert(0, index)
    first = next((at for at, index in enumerate(tail) if opens_note(layout.lines[index].text)
                  and layout.lines[index].rect.y1 - layout.lines[index].rect.y0 < SMALLER_TYPE * row_height), None)
    return members if first is None else members - set(tail[first:])


def _middle(rect: Rect) -> float:
    return (rect.y0 + rect.y1) / 2


def _box(layout: PageLayout, members: set[int]) -> Rect:
    box = layout.lines[min(members)].rect
    for index in members:
        box = box.union(layout.lines[index].rect)
    return box


def _near(one: Rect, other: Rect, layout: PageLayout) -> bool:
    """Two groups of table lines close enough to be one table: under three line heights apart one above
    the other, and side by side no farther apart than a fifth of the page (the gap between two columns)."""
    height, reach = _line_height(layout), 0.2 * layout.width
    return (one.y0 - other.y1 < 2.5 * height and other.y0 - one.y1 < 2.5 * height
            and one.x0 - other.x1 < reach and other.x0 - one.x1 < reach)


def _line_height(layout: PageLayout) -> float:
    heights = sorted(line.rect.y1 - line.rect.y0 for line, kind in zip(layout.lines, layout.kinds, strict=True)
                     if kind == TABLE)
    return heights[len(heights) // 2] if heights else 10.0


def _caption_for(layout: PageLayout, region: Rect) -> int | None:
    """The line opening the nearest "Table N" caption above or below the region, overlapping its columns."""
    best: tuple[float, int] | None = None
    for index in layout.region_starts:
        line = layout.lines[index]
        if layout.kinds[index] != CAPTION or not _TABLE_LABEL.match(line.text):
            continue
        if line.rect.x1 <= region.x0 or line.rect.x0 >= region.x1:
            continue
        distance = max(region.y0 - line.rect.y1, line.rect.y0 - region.y1, 0.0)
        if distance < 0.3 * layout.height and (best is None or distance < best[0]):
            best = (distance, index)
    return best[1] if best is not None else None


def _caption_lines(layout: PageLayout, start: int) -> list[int]:
    """The caption's lines: from ``start`` on, while they are a caption's and open no other one."""
    lines = [start]
    for index in range(start + 1, len(layout.lines)):
        if layout.kinds[index] != CAPTION or index in layout.region_starts:
            break
        lines.append(index)
    return lines


def _caption_bottom(layout: PageLayout, start: int, region: Rect) -> float | None:
    """Where a caption set under the table ends (its notes follow it); None for a caption above."""
    if layout.lines[start].rect.y0 < region.y1:
        return None
    return max(layout.lines[index].rect.y1 for index in _caption_lines(layout, start))


def _caption_text(layout: PageLayout, start: int) -> tuple[str, str]:
    """The caption's label ("Table 2") and its whole text (the caption lines from ``start`` on)."""
    text = " ".join(layout.lines[index].text for index in _caption_lines(layout, start))
    match = _TABLE_LABEL.match(text)
    label = f"Table {match.group(3)}" if match else ""
    if match and match.group(1):
        label = f"{match.group(1).strip()} {label}"
    return label, text


def _structure(layout: PageLayout, region: Rect, members: set[int], label: str,
               caption: str) -> FoundTable | None:
    """The region's rows and columns, kept only when they pass the checks in the module's docstring."""
    lines = sorted(members, key=lambda index: (layout.lines[index].rect.y0, layout.lines[index].rect.x0))
    grid_rows = _rows([layout.lines[index].words for index in lines])
    if not 2 <= len(grid_rows) <= MAX_ROWS:
        return None
    chunked = [_chunks(words) for words in grid_rows]
    columns = _columns(chunked)
    if len(columns) < 2:
        return None
    grid = [_place(row, columns) for row in chunked]
    texts = [text for row in grid for text, _ in row]
    filled = [text for text in texts if text]
    if len(filled) < MIN_FILLED * len(texts):
        return None
    joined = "".join(filled)
    if len(_UNREADABLE.findall(joined)) > MAX_UNREADABLE * len(joined):
        return None
    grid = _join_continuations(grid)
    text_grid = [[text for text, _ in row] for row in grid]
    header_count = header_rows(text_grid, row_gaps(grid))
    if len(grid) - header_count < 1:
        return None
    headers = column_headers(grid[:header_count], columns)
    header_cells = [TableCell(col, text, headers[col], rect) for row in grid[:header_count]
                    for col, (text, rect) in enumerate(row) if text and rect is not None]
    rows = [[TableCell(col, text, headers[col], rect) for col, (text, rect) in enumerate(row)
             if text and rect is not None] for row in grid[header_count:]]
    rows = [row for row in rows if row]
    box = region
    return FoundTable(layout.number, box, label, caption, headers, rows, set(members), header_cells)


Chunk = tuple[float, float, str, Rect, list[Any]]  # x0, x1, text, box and words set close together in a row
_PLAIN_NUMBER = re.compile(r"^[-+\u2212]?(\d+(\.\d*)?|\.\d+)$")


def _rows(lines: list[list[Any]]) -> list[list[Any]]:
    """The region's words grouped into table rows: lines side by side (one per cell, as some PDFs set
    them) are one row; words in each row left to right."""
    rows: list[list[Any]] = []
    spans: list[tuple[float, float]] = []
    for words in lines:
        y0, y1 = min(word[1] for word in words), max(word[3] for word in words)
        middle = (y0 + y1) / 2
        if rows and spans[-1][0] <= middle <= spans[-1][1]:
            rows[-1].extend(words)  # the row keeps its first line's span: a taller line must not pull in the next
        else:
            rows.append(list(words))
            spans.append((y0, y1))
    return [sorted(row, key=lambda word: word[0]) for row in rows]


def _chunks(words: list[Any]) -> list[Chunk]:
    """A row's words split where the gap between two is wider than a word space: its cells' texts."""
    chunks: list[Chunk] = []
    current: list[Any] = []
    for word in words:
        if current:
            height = word[3] - word[1]
            if word[0] - current[-1][2] > max(0.6 * height, 3.0):
                chunks.append(_chunk(current))
                current = []
        current.append(word)
    if current:
        chunks.append(_chunk(current))
    # Numbers set one word space apart ("84.2 88.4 91.5" in a tightly set table) are cells of their own:
    # one cell never holds two plain numbers side by side.
    split: list[Chunk] = []
    for chunk in chunks:
        if len(chunk[4]) >= 2 and all(_PLAIN_NUMBER.match(str(word[4])) for word in chunk[4]):
            split.extend(_chunk([word]) for word in chunk[4])
        else:
            split.append(chunk)
    return split


def _chunk(words: list[Any]) -> Chunk:
    rect = Rect(min(w[0] for w in words), min(w[1] for w in words), max(w[2] for w in words),
                max(w[3] for w in words))
    return rect.x0, rect.x1, " ".join(str(w[4]) for w in words), rect, list(words)


def _columns(rows: list[list[Chunk]]) -> list[tuple[float, float]]:
    """Column spans from the rows with the most cells (the body's): the x ranges of their cells, merged
    where they overlap. A header cell spanning several columns does not join them."""
    counts = sorted(len(row) for row in rows)
    if not counts or counts[-1] < 2:
        return []
    wide = counts[int(0.75 * (len(counts) - 1))]
    spans = sorted((chunk[0], chunk[1]) for row in rows if len(row) >= max(2, wide) for chunk in row)
    columns: list[tuple[float, float]] = []
    for x0, x1 in spans:
        if columns and x0 <= columns[-1][1]:
            columns[-1] = (columns[-1][0], max(columns[-1][1], x1))
        else:
            columns.append((x0, x1))
    return columns


def _place(row: list[Chunk], columns: list[tuple[float, float]]) -> list[tuple[str, Rect | None]]:
    """A row's cells, one per column: each chunk goes to the column it overlaps most (nearest if none)."""
    cells: list[list[Chunk]] = [[] for _ in columns]
    for chunk in _split_spanning(row, columns):
        x0, x1 = chunk[0], chunk[1]
        overlaps = [min(x1, c1) - max(x0, c0) for c0, c1 in columns]
        best = max(range(len(columns)), key=overlaps.__getitem__)
        if overlaps[best] <= 0:
            middle = (x0 + x1) / 2
            best = min(range(len(columns)), key=lambda i: abs((columns[i][0] + columns[i][1]) / 2 - middle))
        # A cell spanning several columns (a merged header) starts in the first one it covers.
        spanned = [i for i, overlap in enumerate(overlaps) if overlap > 0]
        if len(spanned) > 1:
            best = spanned[0]
        cells[best].append(chunk)
    placed: list[tuple[str, Rect | None]] = []
    for chunks in cells:
        if not chunks:
            placed.append(("", None))
            continue
        rect = chunks[0][3]
        for chunk in chunks[1:]:
            rect = rect.union(chunk[3])
        placed.append((" ".join(chunk[2] for chunk in chunks), rect))
    return placed


def _split_spanning(row: list[Chunk], columns: list[tuple[float, float]]) -> list[Chunk]:
    """A chunk over several columns with one word per column ("CLS USR CITE REC All" set tightly) is that
    many cells; any other chunk over several columns stays whole (a merged header cell), but for
    the numbers at its end."""
    split: list[Chunk] = []
    for chunk in row:
        words = chunk[4]
        spanned = [col for col in columns if min(chunk[1], col[1]) - max(chunk[0], col[0]) > 0]
        if len(spanned) > 1 and len(words) == len(spanned) and all(
                min(word[2], col[1]) - max(word[0], col[0]) > 0 for word, col in zip(words, spanned, strict=True)):
            split.extend(_chunk([word]) for word in words)
            continue
        # Trailing numbers run into a row's name ("fine-tune on co-citation 82.9 84.3") are its next cells.
        numbers = 0
        while numbers < len(words) - 1 and _PLAIN_NUMBER.match(str(words[len(words) - 1 - numbers][4])):
            numbers += 1
        if len(spanned) > 1 and numbers:
            split.append(_chunk(words[:len(words) - numbers]))
            split.extend(_chunk([word]) for word in words[len(words) - numbers:])
        else:
            split.append(chunk)
    return split


def _join_continuations(grid: list[list[tuple[str, Rect | None]]]) -> list[list[tuple[str, Rect | None]]]:
    """A row with an empty first cell and no values carries on the row above (a cell's text wrapped)."""
    joined: list[list[tuple[str, Rect | None]]] = []
    for row in grid:
        texts = [text for text, _ in row]
        # Only under cells of the row above: a row that fills columns empty above is a row of its own
        # (the "Frozen Finetune" under a header cell spanning both).
        if joined and not texts[0] and not any(is_value(text) for text in texts if text) and \
                sum(bool(text) for text in texts) <= max(1, len(texts) // 2) and \
                all(upper for (text, _), (upper, _) in zip(row, joined[-1], strict=True) if text):
            above = joined[-1]
            merged: list[tuple[str, Rect | None]] = []
            for (text, rect), (upper, upper_rect) in zip(row, above, strict=True):
                if text and upper and upper_rect is not None and rect is not None:
                    merged.append((f"{upper} {text}", upper_rect.union(rect)))
                elif text:
                    merged.append((text, rect))
                else:
                    merged.append((upper, upper_rect))
            joined[-1] = merged
            continue
        joined.append(row)
    return joined


def _clean(text: str | None) -> str:
    return " ".join((text or "").split())


def row_text(label: str, row: list[TableCell]) -> tuple[str, list[tuple[int, int, Rect]]]:
    """A row's passage text and, per word, its span and the box of the cell it came from.

    "Table 2, row SPECTER: co-view MAP 83.8, co-read MAP 84.5": the stub (the first cell) names the
    row; every other cell is written after its column's header. The label and the header words
    take the box of the cell they introduce, so a quote outlines the cells it quotes.
    """
    stub, rest = row[0], row[1:]
    parts: list[tuple[str, Rect]] = []
    opening = f"{label}, row" if label else "Row"
    parts.append((opening, stub.rect))
    parts.append((f"{stub.text}:" if rest else stub.text, stub.rect))
    for position, cell in enumerate(rest):
        value = cell.text + ("," if position < len(rest) - 1 else "")
        if cell.header and cell.header != stub.header:
            parts.append((cell.header, cell.rect))
        parts.append((value, cell.rect))
    text_parts: list[str] = []
    spans: list[tuple[int, int, Rect]] = []
    position = 0
    for part, rect in parts:
        for word in part.split():
            if text_parts:
                position += 1
            spans.append((position, position + len(word), rect))
            text_parts.append(word)
            position += len(word)
    return " ".join(text_parts), spans


def row_passages(table: FoundTable, number: int, doc_id: str, title: str, numbering: Any) -> list[Passage]:
    """One "table row" passage per body row of ``table`` (the document's table ``number``), numbered in order.

    ``numbering`` is the document's :class:`engine.ingest.chunk.Numbering`, so the rows take their
    places in the one sequence of passages and of the document's text.
    """
    passages = []
    for index, row in enumerate(table.rows):
        text, spans = row_text(table.label, row)
        boxes = array("f")
        for start, end, rect in spans:
            boxes.extend((start, end, table.page, *rect))
        ordinal, start = numbering.claim(len(text))
        info = TableRow(number, table.label, table.caption, table.page, index, tuple(table.headers), tuple(row),
                        table.notes)
        passages.append(Passage(
            id=passage_id(doc_id, ordinal), doc_id=doc_id, ordinal=ordinal, text=text, title=title,
            page_start=table.page, page_end=table.page, char_start=start, char_end=start + len(text),
            rects=tuple(PageRect(table.page, cell.rect) for cell in row),
            content_hash=content_hash(f"{title}\n{text}"), words=WordBoxes(boxes), kind=TABLE_ROW, table=info))
    return passages
