"""A table's header: how many of its first rows head the columns, and each column's header text.

The rows above the first row that states values are the header ("83.8", "28.9M (35.6%)", "0.61 ±
0.02" state values; "MAP", "Model" do not). A first row of numbers can head the columns (sizes
"10k 20k", model numbers "(1) (2)") when the rows below read differently. A table of words ends
its header at the first wide gap between rows, the rule under a header set over several lines.
In an upper header row, a group header centred over several columns heads them all.
"""

from __future__ import annotations

import re
from itertools import pairwise

from engine.types import Rect

# A cell that states a value: a number, a percentage, a range, a score with its spread ("83.8", "12%",
# "0.61 ± 0.02", "(3.1)", "-", "n/a").
_VALUE = re.compile(r"^[(\[]?[-+\u2212~<>≤≥]?\s*\d[\d.,]*\s*(%|[±\u00b1]\s*\d[\d.,]*)?[)\]*†‡]*$"
                    r"|^[-\u2013\u2014]$|^n/?a$", re.I)
_NUMBER_FIRST = re.compile(r"^[(\[]?[-+\u2212~<>≤≥±]?\s*\.?\d")


def is_value(text: str) -> bool:
    """A cell that states a value: a number first ("83.8", "81.1M", "28.9M (35.6%)", "0.61 ± 0.02"), or a dash."""
    if _VALUE.match(text):
        return True
    if not _NUMBER_FIRST.match(text):
        return False
    characters = [ch for ch in text if ch.isalnum()]
    return sum(ch.isdigit() for ch in characters) >= 0.4 * len(characters)


def header_rows(grid: list[list[str]], gaps: list[float]) -> int:
    """How many leading rows are the header: those above the first row that states values.

    A first row of numbers can head the columns (``_numbered_header``). In a table of words only
    (no row of values) the header ends at the first wide gap between rows, else after one row.
    At most five rows count as the header (a cell set between two header lines is a row of its own).
    """
    for index, row in enumerate(grid[:6]):
        if _states_values(row):
            return 1 if index == 0 and _numbered_header(grid) else index
    return _header_by_gap(gaps)


def _states_values(row: list[str]) -> bool:
    values = [text for text in row[1:] if text]
    return bool(values) and sum(map(is_value, values)) >= 0.5 * len(values)


def _numbered_header(grid: list[list[str]]) -> bool:
    """A first row of numbers that heads the columns ("10k 20k 50k", "(1) (2) (3)", "1 5 10") rather than
    starting the body: the rows below it state no values, or state them with decimals it lacks."""
    first, below = [text for text in grid[0][1:] if text], [row[1:] for row in grid[1:4]]
    if len(grid) < 2 or any("." in text for text in first):
        return False
    if not any(_states_values(row) for row in grid[1:4]):
        return True
    cells = [text for row in below for text in row if text]
    return bool(cells) and sum("." in text for text in cells) >= 0.5 * len(cells)


def row_gaps(grid: list[list[tuple[str, Rect | None]]]) -> list[float]:
    """The space between each row and the one above it (0 for the first)."""
    spans = []
    for row in grid:
        rects = [rect for _, rect in row if rect is not None]
        spans.append((min(r.y0 for r in rects), max(r.y1 for r in rects)) if rects else (0.0, 0.0))
    return [0.0] + [max(0.0, top - above[1]) for above, (top, _) in pairwise(spans)]


def _header_by_gap(gaps: list[float]) -> int:
    """In a table of words, the header is the rows above the first wide gap (the rule under a header
    set over several lines), when that gap comes within the first five rows; else one row."""
    if len(gaps) < 3:
        return 1
    body = sorted(gaps[1:])
    usual = body[len(body) // 2]
    wide = max(1.5 * usual, usual + 2.0)
    for index in range(1, min(6, len(gaps) - 1)):
        if gaps[index] >= wide:
            return index
    return 1


def column_headers(rows: list[list[tuple[str, Rect | None]]], columns: list[tuple[float, float]]) -> list[str]:
    """One header text per column: the header rows' texts above it, a spanning cell repeated over its columns.

    In an upper header row a cell centred on the gap between two columns spans them, and on out
    over the columns either side as long as both are empty in that row: a group header is centred
    over its group ("co-view" over "MAP" and "nDCG", "1-best" over four). A cell centred over a
    column (a header wrapped onto several lines of its own column) heads that column only.
    """
    headers = [""] * len(columns)
    for depth, row in enumerate(rows):
        texts = [text for text, _ in row]
        spans: list[list[int]] = [[col] if text else [] for col, text in enumerate(texts)]
        if depth < len(rows) - 1:
            # A group header grows no further than where its neighbour's group starts.
            pairs = {col: _pair((rect.x0 + rect.x1) / 2, columns) for col, (text, rect) in enumerate(row)
                     if text and rect is not None}
            for col, (text, rect) in enumerate(row):
                # A cell set flush with its column's left edge heads that column, wherever its middle falls.
                if text and rect is not None and abs(rect.x0 - columns[col][0]) > 1.0:
                    claimed = {j for other, pair in pairs.items() if other != col for j in pair}
                    spans[col] = _spanned(col, pairs[col], texts, len(columns), claimed)
        for col, spanned in enumerate(spans):
            for target in spanned:
                headers[target] = f"{headers[target]} {texts[col]}".strip()
    return headers


def _pair(middle: float, columns: list[tuple[float, float]]) -> list[int]:
    """The two columns whose gap holds ``middle``, or none when it falls over a column."""
    left = next((j for j in range(len(columns) - 1) if columns[j][1] <= middle <= columns[j + 1][0]), None)
    return [left, left + 1] if left is not None else []


def _spanned(col: int, pair: list[int], texts: list[str], width: int, claimed: set[int]) -> list[int]:
    """The columns a header cell placed in ``col`` and centred on the gap of ``pair`` spans (``_headers``)."""
    if not pair or any(texts[j] and j != col for j in pair):
        return [col]
    spanned = list(pair)
    low, high = pair[0] - 1, pair[1] + 1
    while low >= 0 and high < width and not texts[low] and not texts[high] \
            and low not in claimed and high not in claimed:
        spanned += [low, high]
        low, high = low - 1, high + 1
    return sorted(spanned)
