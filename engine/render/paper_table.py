"""A table of papers (``quire table``) as CSV and as Markdown.

The CSV has the paper's title, authors and year, then for every field three columns: the cell's
sentence, the verbatim quote behind it and its page, so a spreadsheet can sort by any field and
still show where each answer came from. Every cell is made inert for spreadsheets (a title from a
PDF may start with "="); the Markdown escapes pipes and folds line breaks.
"""

from __future__ import annotations

import csv
import io

from engine.render.table import inert_cell, markdown_cell
from engine.table_types import PaperTable, TableCell


def stopped_note(table: PaperTable) -> str:
    """What a stopped table holds, in words."""
    if not table.papers_addressing:
        return (f"Stopped while finding which of the {table.papers_in_scope} papers in scope address the question; "
                "no row was finished.")
    return (f"Stopped after {table.papers_read} of the {table.papers_addressing} papers that address the question; "
            "the finished rows are kept.")


def csv_header(table: PaperTable) -> list[str]:
    header = ["paper", "authors", "year"]
    for column in table.columns:
        header += [column.name, f"{column.name} quote", f"{column.name} page"]
    return header


def _page(cell: TableCell) -> str:
    return "" if cell.page is None else str(cell.page)


def to_csv(table: PaperTable) -> str:
    """A header line, then a row per paper (RFC 4180 quoting), every cell inert in a spreadsheet."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([inert_cell(name) for name in csv_header(table)])
    for row in table.rows:
        cells = [" ".join(row.bib.title.split()), row.bib.authors_short, str(row.bib.year or "")]
        for cell in row.cells:
            cells += [cell.text, cell.quote, _page(cell)]
        writer.writerow([inert_cell(text) for text in cells])
    return buffer.getvalue()


def to_markdown(table: PaperTable) -> str:
    """The question, any notice, then a Markdown table: paper, then a column per field (sentence, page)."""
    lines = [f"**Q:** {markdown_cell(table.question)}", ""]
    if table.notice:
        lines += [f"> {markdown_cell(table.notice)}", ""]
    if not table.rows:
        empty = stopped_note(table) if table.cancelled else "No paper in scope addresses the question."
        return "\n".join([*lines, empty, ""])
    lines.append("| Paper | " + " | ".join(markdown_cell(c.name) for c in table.columns) + " |")
    lines.append("|---" * (len(table.columns) + 1) + "|")
    for row in table.rows:
        who, year = row.bib.authors_short, row.bib.year
        paper = row.bib.title + (f" ({who}{', ' if who and year else ''}{year or ''})" if who or year else "")
        cells = [markdown_cell(c.text) + (f" (p. {c.page})" if c.page is not None else "") for c in row.cells]
        lines.append(f"| {markdown_cell(paper)} | " + " | ".join(cells) + " |")
    if table.cancelled:
        lines += ["", stopped_note(table)]
    return "\n".join(lines) + "\n"


__all__ = ["csv_header", "stopped_note", "to_csv", "to_markdown"]
