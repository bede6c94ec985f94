"""The text of a "table row" passage, read back into its parts.

Ingest writes a table row as "Table 2, row SPECTER: co-view MAP 83.8, co-read MAP 84.5" (or "Row ...:"
where no caption names the table; engine/ingest/tables.py): the stub (the row's name), then each cell's
value after its column's header, cells parted by ", ". Search, the digest and the judge all read rows
from their text, so the one pattern lives here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A row of its stub alone has no colon, and so is no row to read here.
TABLE_ROW = re.compile(r"^(?:Table \S+, row|Row) ([^\n]{1,200}?): (\S.*)$", re.DOTALL)
_CELL_BREAK = ", "


@dataclass(frozen=True)
class RowText:
    """A row's text in parts: ``prefix`` is "Table 2, row SPECTER: ", ``stub`` "SPECTER", and ``cells``
    the (start, end) of each "header value" part in the text, in order."""

    text: str
    prefix: str
    stub: str
    cells: tuple[tuple[int, int], ...]

    def cell_text(self, index: int) -> str:
        start, end = self.cells[index]
        return self.text[start:end]


def read_row(text: str) -> RowText | None:
    """The parts of a table row's text, or None when ``text`` is not one.

    A cell whose own text holds ", " ("Collier and Kim, 2004") reads as two parts here; the parts are
    for judging and quoting one cell, and such a part still lies inside its row."""
    match = TABLE_ROW.match(text)
    if match is None:
        return None
    cells = []
    start = match.start(2)
    while start < len(text):
        end = text.find(_CELL_BREAK, start)
        end = len(text) if end < 0 else end
        if end > start:
            cells.append((start, end))
        start = end + len(_CELL_BREAK)
    return RowText(text, text[:match.start(2)], match.group(1), tuple(cells))
