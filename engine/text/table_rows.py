"""The text of a "table row" passage, read back into its parts.

Ingest writes a table row as "Table 2, row SPECTER: co-view MAP 83.8, co-read MAP 84.5" (or "Row ...:"
where no caption names the table; engine/ingest/tables.py): the stub (the row's name), then each cell's
value after its column's header, cells parted by ", ". Search, the digest and the judge all read rows
from their text, so the one pattern lives here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.text.stopwords import STOP_WORDS

# A row of its stub alone has no colon, and so is no row to read here.
TABLE_ROW = re.compile(r"^(?:Table \S+, row|Row) ([^\n]{1,200}?): (\S.*)$", re.DOTALL)
_CELL_BREAK = ", "
_WORD = re.compile(r"\w+")
_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"")  # a title the question quotes names the paper, not a column


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


def asked_cells(question: str, text: str) -> tuple[tuple[int, int], ...]:
    """The parts of the table row ``text`` that ``question`` asks for, to cite and outline: the row's name (the
    span of its prefix, whose words carry the stub cell's box), then the cells whose headers share the most
    words with the question ("what is the MAG F1 of Random?" of "Table 3, row Random: MAG F1 4.8, MeSH F1 9.4"
    asks for the MAG F1 cell). Empty when ``text`` is no row, when the question does not name the row (every
    word of its stub), or when it names none of its headers. Numbers never count as header words, nor function
    words unless a header is all function words ("All"), nor the words of a title the question quotes
    (“In “S2ORC: ...”, what is the SciBERT of JNLPBA?” asks for both SciBERT columns, not the S2ORC one).
    A reader trained on sentences scores a row below prose about the paper's topic, so a row with asked cells
    ranks first (engine/synthesis/evidence.py)."""
    row = read_row(text)
    if row is None:
        return ()
    stub = set(_WORD.findall(row.stub.casefold()))
    if not stub or not stub <= set(_WORD.findall(question.casefold())):
        return ()
    wanted = set(_WORD.findall(_QUOTED.sub(" ", question).casefold())) - stub
    shares = [len(_header_words(row.cell_text(i)) & wanted) for i in range(len(row.cells))]
    best = max(shares, default=0)
    if not best:
        return ()
    name = (0, len(row.prefix.rstrip(": ")))
    return (name, *(cell for cell, share in zip(row.cells, shares, strict=True) if share == best))


def _header_words(cell: str) -> set[str]:
    """The words of a cell that can name its column: numbers left out, and function words unless they are
    all there is (a column "All")."""
    words = {word for word in _WORD.findall(cell.casefold()) if not word.isdigit()}
    return words - STOP_WORDS or words
