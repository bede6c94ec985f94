"""A table of papers (``quire table``, the app's table window) as CSV and as Markdown.

The CSV has the paper's title, authors and year, then for every column three: the cell's sentence,
the verbatim quote behind it and its page, so a spreadsheet can sort by any column and still show
where each answer came from. Every cell is made inert for spreadsheets (a title from a PDF may
start with "="); the Markdown escapes pipes and folds line breaks, so a paper's text cannot break
the table.
"""

from __future__ import annotations

import csv
import io

from engine.table_types import PaperTable, TableCell

# A spreadsheet runs a cell that starts with one of these as a formula (OWASP's CSV injection list).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def inert_cell(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet will run: a leading formula character gets a ``'`` before it.

    Titles, authors and quotes come from PDFs and datastore records anyone can write; a title
    ``=HYPERLINK(...)`` or ``=cmd|...`` would otherwise run when the exported table is opened.
    """
    # Whitespace is folded first: the writer quotes only "\n" line breaks, and a bare "\r" inside
    # a cell would start a new row in a spreadsheet.
    text = " ".join(text.split())
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def markdown_cell(text: str) -> str:
    """Text fit for one Markdown table cell: one line, backslashes and pipes escaped."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|")


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
    """The question, any notice, then a Markdown table: paper, then each column (sentence, page)."""
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


__all__ = ["csv_header", "inert_cell", "markdown_cell", "stopped_note", "to_csv", "to_markdown"]
