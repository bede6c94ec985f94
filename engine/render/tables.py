"""A paper's own tables, rebuilt from its "table row" passages, as CSV and as Markdown.

Ingest stores a table as one passage per body row, each holding the table's label, caption, page,
column headers and the row's cells (``engine.types.TableRow``). Grouping a document's rows by
their table gives the table back: the headers as its first row, then each body row with its cells
in their columns (a column the row leaves empty stays empty).

CSV cells are made inert for spreadsheets as the table of papers' are (a cell starting "=" gets a
``'``), except a plain number: "-0.344" is a value, not a formula, and must stay one.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass

from engine.render.paper_table import inert_cell, markdown_cell
from engine.types import Passage

_NUMBER = re.compile(r"^[-+]?(\d[\d,]*)?\.?\d+(e[-+]?\d+)?%?$", re.I)


@dataclass(frozen=True)
class DocumentTable:
    """One table of a document: label ("Table 2"), caption, page, column headers, body rows and the
    footnotes set under it."""

    number: int  # the document's tables counted from 0 in reading order
    label: str
    caption: str
    page: int
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return f"{self.label or f'Table {self.number + 1}'} (page {self.page})"


def document_tables(passages: Iterable[Passage]) -> list[DocumentTable]:
    """The tables among ``passages`` (a document's, in order), each with its rows in order."""
    grouped: dict[int, list[Passage]] = {}
    for passage in passages:
        if passage.table is not None:
            grouped.setdefault(passage.table.table, []).append(passage)
    tables = []
    for number, rows in sorted(grouped.items()):
        info = rows[0].table
        assert info is not None
        width = max([len(info.headers), *(cell.col + 1 for p in rows if p.table for cell in p.table.cells)])
        body = []
        for passage in sorted(rows, key=lambda p: p.table.row if p.table else 0):
            cells = [""] * width
            for cell in passage.table.cells if passage.table else ():
                cells[cell.col] = cell.text
            body.append(tuple(cells))
        headers = tuple(info.headers) + ("",) * (width - len(info.headers))
        tables.append(DocumentTable(number, info.label, info.caption, info.page, headers, tuple(body), info.notes))
    return tables


def find_table(tables: list[DocumentTable], wanted: str) -> DocumentTable | None:
    """The table whose label is ``wanted`` ("Table 2", "2", case and spaces ignored), or None."""
    key = "".join(wanted.split()).casefold()
    for table in tables:
        label = "".join(table.label.split()).casefold()
        if key in (label, label.removeprefix("table")):
            return table
    return None


def _csv_cell(text: str) -> str:
    text = " ".join(text.split())
    return text if _NUMBER.match(text.replace("\u2212", "-")) else inert_cell(text)


def table_csv(table: DocumentTable) -> str:
    """The table as CSV: the headers' row, then the body rows (cells only: its notes would read as rows)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([_csv_cell(text) for text in table.headers])
    for row in table.rows:
        writer.writerow([_csv_cell(text) for text in row])
    return out.getvalue()


def table_markdown(table: DocumentTable) -> str:
    """The table as a Markdown (GitHub) table under a line naming it and its caption, its notes under it."""
    lines = [f"**{markdown_cell(table.title)}** {markdown_cell(table.caption)}".rstrip(), ""]
    lines.append("| " + " | ".join(markdown_cell(text) for text in table.headers) + " |")
    lines.append("|" + "---|" * len(table.headers))
    lines.extend("| " + " | ".join(markdown_cell(text) for text in row) + " |" for row in table.rows)
    if table.notes:
        lines.append("")
        lines.extend(f"{markdown_cell(note)}  " for note in table.notes)
    return "\n".join(lines) + "\n"
