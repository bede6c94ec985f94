"""A table of papers: a row per paper in scope that addresses the question, a column per question asked of it.

Each paper is read on its own. Its passages are searched for the table's question (retrieval
within the paper); a paper whose best passage stays under the relevance floor, or well below the
best paper's, does not address the question and gets no row. For each column the paper is
searched again with the column's question, and the cell is the sentence of the passages found
that best answers it, verbatim. With a writer, one call per row writes a sentence per column from
those quotes; a written sentence is kept only when the support judge finds it backed by one of
that paper's passages (the cell then shows the quote it relies on), otherwise the cell is the
quote itself. The answer reader chooses which sentence answers the column best; a column nothing in
the paper comes close to says "not stated".

Rows are reported one at a time through ``on_row`` (a caller shows progress per row and the rows
so far); a Stop between papers, columns or tokens keeps every finished row.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from engine.bibliography import Bibliography
from engine.cite.markers import strip_markers
from engine.cite.support import SupportScorer
from engine.cite.verify import RectsFor, Verifier, no_rects, verify_sentence
from engine.cite.windows import prose_like
from engine.errors import Cancelled, GenerationError, QueryError
from engine.generate.base import ChatMessage, LanguageModel
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.retrieve.fts import readable_text
from engine.synthesis import prompts
from engine.synthesis.evidence import RELEVANCE_THRESHOLD, TABLE_RELATIVE_RELEVANCE, Quote, extract_evidence
from engine.synthesis.quotable import tabular
from engine.table_types import NOT_STATED, PaperRow, PaperTable, TableCell, TableColumn
from engine.text.addressed import addresses_the_model
from engine.text.artefacts import as_shown
from engine.text.furniture import has_page_furniture
from engine.tuning import SYNTHESIS
from engine.types import PageRect, Reference

log = logging.getLogger(__name__)

ANSWER_COLUMN = "Answer"
MAX_COLUMNS = 12
MAX_COLUMN_NAME_CHARS = 60
# A column asks one thing of a paper; a longer text is a paste, and only its start is searched.
MAX_COLUMN_QUESTION_CHARS = 300
PASSAGES_PER_CELL = 4  # passages of the paper read per column
# A column question ("What data does the study use?") shares few words with the sentence that
# answers it, so a cell accepts a weaker match than the row's own question needs; under this floor
# the sentence is only loosely about the column, and the cell says "not stated" instead of quoting it
# (set by hand: engine/tuning.py).
CELL_FLOOR = SYNTHESIS.cell_floor
# The answer reader reads a cell's best sentences by the hand-weighted score, not all of them: a table
# has a cell per paper and column, and the sentence that answers is almost always among these
# (benchmarks/reader.py measures the share and the time per cell).
CELL_READ_LIMIT = SYNTHESIS.cell_read_limit
_LINE = re.compile(r"^\s*\[(\d+)\]\s*(.+)$")

# (query, paper, k) -> the paper's k passages nearest the query, numbered 1..k, best first.
SearchPaper = Callable[[str, "PaperInScope", int], list[Reference]]
RowCallback = Callable[[PaperRow], None]


@dataclass(frozen=True)
class PaperInScope:
    doc_id: str
    bib: Bibliography  # its title is never empty: the file's name stands in for one the PDF did not give


def default_columns() -> tuple[TableColumn, ...]:
    """The paper's answer to the question (an empty question: the table's own), method, data, main result.

    The questions use the words a paper's own sentence would ("proposed", "outperform"): a cell is
    found by shared words and meaning. They were compared by reading tables of five papers of the
    test corpus, not measured on a labelled set.
    """
    return (TableColumn(ANSWER_COLUMN, ""),
            TableColumn("Method", "What new method, model or approach is proposed?"),
            TableColumn("Data / sample", "What dataset, corpus, data or participants are used for training and "
                                         "evaluation?"),
            TableColumn("Main result", "What is the main result: what does it outperform or show?"))


def normalise_columns(columns: Sequence[TableColumn]) -> tuple[tuple[TableColumn, ...], str]:
    """The columns as used, and a notice saying what was changed.

    A column with no question asks its name ("Sample size"); one with neither is dropped; a long
    question keeps its first ``MAX_COLUMN_QUESTION_CHARS`` characters (at a word boundary). The
    Answer column's empty question stands for the table's question and is kept as it is.
    """
    kept: list[TableColumn] = []
    notices: list[str] = []
    for column in columns:
        name = " ".join(readable_text(column.name).split())[:MAX_COLUMN_NAME_CHARS]
        question = " ".join(readable_text(column.question).split())
        if not question and name != ANSWER_COLUMN:
            question = name
        if not name and not question:
            notices.append("A column with neither a name nor a question was left out.")
            continue
        if len(question) > MAX_COLUMN_QUESTION_CHARS:
            cut = question.rfind(" ", 0, MAX_COLUMN_QUESTION_CHARS)
            question = question[: cut if cut > MAX_COLUMN_QUESTION_CHARS // 2 else MAX_COLUMN_QUESTION_CHARS]
            notices.append(f"The question of column \u201c{name or question[:30]}\u201d was shortened to its first "
                           f"{len(question)} characters.")
        kept.append(TableColumn(name or question[:MAX_COLUMN_NAME_CHARS], question))
    if len(kept) > MAX_COLUMNS:
        notices.append(f"Only the first {MAX_COLUMNS} columns were filled in.")
        kept = kept[:MAX_COLUMNS]
    if not kept:
        raise QueryError("The table has no columns; add a column with a question, e.g. "
                         "\u201cWhat method is used?\u201d")
    return tuple(kept), " ".join(notices)


def build_table(question: str, columns: Sequence[TableColumn], papers: Sequence[PaperInScope], *,
                search: SearchPaper, scorer: SupportScorer, lm: LanguageModel | None = None,
                rects_for: RectsFor = no_rects, on_row: RowCallback | None = None,
                progress: ProgressCallback = no_progress, cancel: CancelToken | None = None,
                notice: str = "") -> PaperTable:
    """The table of ``papers`` for ``question``; see the module docstring. ``question`` is already normalised.

    Progress comes in two stages: "screening" (each paper searched once for the question) and
    "table" (each addressing paper's cells filled in; ``on_row`` hears each finished row).
    """
    used_columns, column_notice = normalise_columns(columns)
    notices = [n for n in (notice, column_notice) if n]
    if not papers:
        notices.append("No paper is in scope, so the table is empty: add papers, or choose a wider scope.")
    rows: list[PaperRow] = []
    try:
        addressing = _addressing(question, papers, search, scorer, progress, cancel)
    except Cancelled:
        return PaperTable(question, used_columns, (), len(papers), 0, True, " ".join(notices))
    read = 0
    cancelled = False
    for paper, found, relevance in addressing:
        if cancel is not None and cancel.cancelled:
            cancelled = True
            break
        progress(Progress("table", read, len(addressing), paper.bib.title or paper.doc_id))
        try:
            row = _row(question, used_columns, paper, found, relevance, search, scorer, lm, rects_for, cancel)
        except Cancelled:
            cancelled = True
            break
        read += 1
        rows.append(row)
        if on_row is not None:
            on_row(row)
    progress(Progress("table", read, len(addressing), ""))
    if papers and not addressing:
        notices.append(f"None of the {len(papers)} papers in scope addresses this question; try other words or a "
                       "wider scope.")
    return PaperTable(question, used_columns, tuple(rows), len(papers), read, cancelled, " ".join(notices),
                      lm.model_id if lm is not None else "", len(addressing))


def _addressing(question: str, papers: Sequence[PaperInScope], search: SearchPaper, scorer: SupportScorer,
                progress: ProgressCallback,
                cancel: CancelToken | None) -> list[tuple[PaperInScope, list[Reference], float]]:
    """The papers that address ``question``, best first, with the passages found for it and their relevance.

    As for an answer, the paper decides: its best passage must clear the absolute floor and come near
    the best paper's (TABLE_RELATIVE_RELEVANCE), or a library on one field would give every paper a
    row for any question in it.
    """
    scored = []
    for done, paper in enumerate(papers):
        if cancel is not None:
            cancel.check()
        progress(Progress("screening", done, len(papers), paper.bib.title or paper.doc_id))
        found = search(question, paper, PASSAGES_PER_CELL)
        relevance = max((e.relevance for e in extract_evidence(question, found, scorer, read=False)), default=0.0)
        scored.append((paper, found, round(relevance, 4)))
    progress(Progress("screening", len(papers), len(papers), ""))
    best = max((relevance for _, _, relevance in scored), default=0.0)
    floor = max(RELEVANCE_THRESHOLD, TABLE_RELATIVE_RELEVANCE * best)
    return sorted((item for item in scored if item[2] >= floor), key=lambda item: -item[2])


def _row(question: str, columns: Sequence[TableColumn], paper: PaperInScope, found: list[Reference],
         relevance: float, search: SearchPaper, scorer: SupportScorer, lm: LanguageModel | None,
         rects_for: RectsFor, cancel: CancelToken | None) -> PaperRow:
    """The paper's row: a quote (or a judged sentence) per column. ``found``: its passages for ``question``."""
    quotes: list[tuple[Quote, Reference] | None] = []
    used: set[tuple[str, int]] = set()  # one sentence fills one cell of a row, not three
    for column in columns:
        if cancel is not None:
            cancel.check()
        asked = column.question or question
        try:
            references = found if asked == question else search(asked, paper, PASSAGES_PER_CELL)
        except QueryError:  # a column question with no searchable word: nothing in the paper answers it
            references = []
        best = _best_quote(asked, references, scorer, used)
        if best is not None:
            used.add((best[1].passage_id, best[0].start))
        quotes.append(best)
    written = _write_row(question, columns, paper, quotes, lm, cancel) if lm is not None else {}
    cells = tuple(_cell(written.get(k + 1, ""), quote, scorer, rects_for)
                  for k, quote in enumerate(quotes))
    return PaperRow(paper.doc_id, paper.bib, cells, relevance)


def _best_quote(asked: str, references: Sequence[Reference], scorer: SupportScorer,
                used: set[tuple[str, int]]) -> tuple[Quote, Reference] | None:
    """The sentence of ``references`` that best answers ``asked`` (not one another cell shows), if any is close."""
    by_number = {r.n: r for r in references}
    # Only running prose: a footnote of URLs, a table's numbers or a code listing shares words with
    # any question without answering it.
    evidence = extract_evidence(asked, references, scorer, quotes_per_passage=3, read_limit=CELL_READ_LIMIT)
    candidates = [(q, by_number[q.n]) for e in evidence for q in e.quotes
                  if q.score >= CELL_FLOOR and _prose(q.text)
                  and (by_number[q.n].passage_id, q.start) not in used]
    return max(candidates, key=lambda pair: pair[0].answer, default=None)


def _prose(text: str) -> bool:
    """A sentence fit to quote in a cell: running prose of the paper's own, not a repository's page
    stamp that ingest kept in the text, nor an instruction planted for a model reading the PDF."""
    return prose_like(text) and not tabular(text) and "://" not in text and _the_papers_own(text)


def _the_papers_own(text: str) -> bool:
    return not has_page_furniture(text) and not addresses_the_model(text)


def quote_page(rects: Sequence[PageRect], reference: Reference) -> int | None:
    """The page the quote is printed on: its first box's, which is where the viewer opens it. A passage
    that runs over a page break starts a page before a quote in its second half; with no boxes (a
    record without layout) the passage's own page is all there is."""
    return rects[0].page if rects else reference.page


def _quote_cell(quote: Quote, reference: Reference, rects_for: RectsFor) -> TableCell:
    rects = rects_for(reference.passage_id, quote.start, quote.end)
    # Shown without the footnote digits extraction glues to words; ``quote`` stays verbatim for the highlight.
    return TableCell(as_shown(quote.text), quote.text, reference.passage_id,
                     quote.start, quote.end, quote_page(rects, reference), rects)


def _cell(written: str, quote: tuple[Quote, Reference] | None, scorer: SupportScorer,
          rects_for: RectsFor) -> TableCell:
    """The written sentence when the judge finds it backed by the cell's passage, else the quote, else "not stated"."""
    if quote is None:
        return TableCell()
    best, reference = quote
    if written and not written.lower().startswith(NOT_STATED):
        own = {1: replace(reference, n=1)}
        sentence = verify_sentence(f"{written.rstrip('. ')} [1].", own, Verifier(scorer, rects_for))
        # Only a fully supported sentence stands in for the quote: a cell is read alone, without the
        # amber mark an answer gives a partly supported sentence.
        if sentence.support == "supported" and sentence.citations and sentence.needs_citation:
            citation = max(sentence.citations, key=lambda c: c.support)
            if _the_papers_own(citation.quote):
                return TableCell(strip_markers(sentence.text).strip(), citation.quote, reference.passage_id,
                                 citation.quote_start, citation.quote_end, quote_page(citation.rects, reference),
                                 citation.rects, written=True)
    return _quote_cell(best, reference, rects_for)


def _write_row(question: str, columns: Sequence[TableColumn], paper: PaperInScope,
               quotes: Sequence[tuple[Quote, Reference] | None], lm: LanguageModel,
               cancel: CancelToken | None) -> dict[int, str]:
    """One call: a sentence per column that has a quote (``[k]`` = column k). A failed call writes nothing."""
    fields = []
    for k, (column, quote) in enumerate(zip(columns, quotes, strict=True), start=1):
        if quote is not None:
            asked = prompts.inert(column.question or question)
            evidence = prompts.inert(quote[0].text)[:320]
            fields.append(f"[{k}] {prompts.inert(column.name)} \u2014 {asked}\n    \"{evidence}\"")
    if not fields:
        return {}
    user = prompts.prompt("table_row").format(title=prompts.inert(paper.bib.title)[:120] or "(untitled)",
                                              question=prompts.inert(question), fields="\n".join(fields))
    messages = [ChatMessage("system", prompts.prompt("answer_system")), ChatMessage("user", user)]
    try:
        completion = lm.chat(messages, max_tokens=48 * len(fields) + 16, temperature=0.0, cancel=cancel)
    except GenerationError as exc:
        log.warning("writing a table row failed (%s); its cells show quotes", exc)
        return {}
    if cancel is not None:
        cancel.check()  # a row cut short by a Stop is not finished, so it is not kept
    rows: dict[int, str] = {}
    for line in completion.text.splitlines():
        match = _LINE.match(line)
        if match and int(match.group(1)) not in rows:
            rows[int(match.group(1))] = strip_markers(match.group(2)).strip().strip('"')
    return rows


__all__ = ["ANSWER_COLUMN", "PaperInScope", "build_table", "default_columns", "normalise_columns"]
