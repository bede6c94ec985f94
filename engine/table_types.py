"""A table of papers (``quire table``, the app's table window): the columns asked for, and each paper's row
of answers to them.

Rows hold verbatim quotes with their page and boxes, so every cell can be checked like a citation.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.bibliography import Bibliography
from engine.types import PageRect

NOT_STATED = "not stated"


@dataclass(frozen=True)
class TableColumn:
    """A column of a table of papers: its heading and the question each paper's cell answers."""

    name: str
    question: str


@dataclass(frozen=True)
class TableCell:
    """One paper's answer to one column: a sentence and the verbatim quote behind it, or "not stated".

    ``quote`` is ``passage text[quote_start:quote_end]``; ``written`` marks a sentence the writer
    composed (and the support judge found backed by ``quote``); otherwise ``text`` is the quote.
    """

    text: str = NOT_STATED
    quote: str = ""
    passage_id: str = ""
    quote_start: int = 0
    quote_end: int = 0
    page: int | None = None
    rects: tuple[PageRect, ...] = ()
    written: bool = False

    @property
    def stated(self) -> bool:
        return bool(self.quote)


@dataclass(frozen=True)
class PaperRow:
    """One paper that addresses the table's question, with a cell per column."""

    doc_id: str
    bib: Bibliography
    cells: tuple[TableCell, ...]
    relevance: float = 0.0  # how closely its best passage addresses the question


@dataclass(frozen=True)
class PaperTable:
    """Rows = the papers in scope that address ``question``; columns = the questions asked of each."""

    question: str
    columns: tuple[TableColumn, ...]
    rows: tuple[PaperRow, ...] = ()
    papers_in_scope: int = 0
    papers_read: int = 0  # addressing papers whose rows were filled in (fewer when cancelled)
    cancelled: bool = False
    notice: str = ""
    model: str = ""  # the writer's model id; "" when cells are quotes
    papers_addressing: int = 0  # papers found to address the question (rows, once all are read)
