"""A per-paper answer (``quire ask --table``) as rows, CSV and a Markdown table.

Row ``n`` is cited paper ``n``: its answer to the question in one verified sentence and the
verbatim quote that supports it, with the page it is on. Cells are plain text; the Markdown
table escapes pipes and folds line breaks so a paper's text cannot break the table.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from engine.cite.markers import defuse_markers, strip_markers
from engine.types import Answer, Reference

COLUMNS = ("n", "paper", "authors", "year", "answer", "quote", "page", "link")


@dataclass(frozen=True)
class TableRow:
    n: int
    paper: str
    authors: str
    year: str
    answer: str
    quote: str
    page: str
    link: str
    supported: bool

    def cells(self) -> tuple[str, ...]:
        return (str(self.n), self.paper, self.authors, self.year, self.answer, self.quote, self.page, self.link)


def rows(answer: Answer) -> list[TableRow]:
    """One row per cited paper, in the answer's order."""
    out = []
    for paper in answer.papers:
        sentence = next((s for s in answer.sentences if any(c.n == paper.n for c in s.citations)), None)
        if sentence is None:
            continue
        citation = next(c for c in sentence.citations if c.n == paper.n)
        passage: Reference | None = next((r for r in answer.references if r.passage_id == citation.passage_id), None)
        page = "" if passage is None or passage.page is None else str(passage.page)
        who = passage.bib.authors_short if passage is not None else ""
        out.append(TableRow(paper.n, " ".join(paper.bib.title.split()), who, str(paper.bib.year or ""),
                            defuse_markers(strip_markers(sentence.text)), " ".join(citation.quote.split()), page,
                            paper.bib.link, sentence.supported))
    return out


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


def to_csv(answer: Answer) -> str:
    """The rows as CSV with a header line (RFC 4180 quoting), every cell inert in a spreadsheet."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows(answer):
        writer.writerow([inert_cell(cell) for cell in row.cells()])
    return buffer.getvalue()


def markdown_cell(text: str) -> str:
    """Text fit for one Markdown table cell: one line, backslashes and pipes escaped."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|")


def to_markdown_table(answer: Answer) -> str:
    """The question, then a Markdown table: #, paper, answer, quote, page."""
    lines = [f"**Q:** {markdown_cell(answer.question)}", ""]
    if answer.notice:
        lines += [f"> {markdown_cell(answer.notice)}", ""]
    table = rows(answer)
    if not table:
        return "\n".join([*lines, markdown_cell(answer.text), ""])
    lines += ["| # | Paper | Answer | Quote | Page |", "|---|---|---|---|---|"]
    for row in table:
        paper = row.paper + (f" ({row.authors}{', ' if row.authors and row.year else ''}{row.year})"
                             if row.authors or row.year else "")
        lines.append(f"| {row.n} | {markdown_cell(paper)} | {markdown_cell(row.answer)} | "
                     f"“{markdown_cell(row.quote)}” | {row.page} |")
    return "\n".join(lines) + "\n"
