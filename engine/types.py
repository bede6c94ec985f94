"""The engine's vocabulary: small frozen dataclasses shared by every stage.

Page numbers are 1-based, as a reader sees them. The boxes on a page (rectangles, word boxes) are
defined in :mod:`engine.boxes` and named here too, so every stage imports its vocabulary from one place.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from engine.bibliography import Bibliography
from engine.boxes import WORD_FIELDS, PageRect, Rect, WordBox, WordBoxes, merge_word_boxes


class DocumentStatus(StrEnum):
    """Where a document stands in the library."""

    INDEXED = "indexed"  # text stored and searchable
    SCANNED = "scanned pages"  # some pages had no text layer and could not be OCR'd
    FAILED = "failed"  # could not be read; ``Document.error`` says why


@dataclass(frozen=True)
class Page:
    """One page of a document as ingested."""

    doc_id: str
    number: int
    width: float
    height: float
    word_count: int
    has_text_layer: bool
    ocr_used: bool = False


def document_id(content_hash: str) -> str:
    """A document's id: the first 16 hex digits of the SHA-256 of its file, so a copy is the same document."""
    return content_hash[:16]


@dataclass(frozen=True)
class Document:
    """A paper in the library. ``id`` is derived from the file's bytes, so a copy is the same document."""

    id: str
    content_hash: str
    path: str
    bib: Bibliography = field(default_factory=Bibliography)  # as read, with imports and corrections laid over
    abstract: str = ""
    page_count: int = 0
    passage_count: int = 0
    status: DocumentStatus = DocumentStatus.INDEXED
    error: str = ""  # why it failed, or which pages need OCR
    file_size: int = 0
    added_at: float = 0.0
    collections: tuple[str, ...] = ()  # where it is filed (Zotero's collections, "Parent › Child"), sorted


@dataclass(frozen=True)
class TableCell:
    """One cell of a table row: its text, its column's header text and its box on the page."""

    col: int
    text: str
    header: str
    rect: Rect


@dataclass(frozen=True)
class TableRow:
    """What a "table row" passage knows of the table it belongs to.

    ``table`` numbers the document's tables from 0 in reading order; ``label`` is the caption's
    label ("Table 2"), empty when no caption names the table; ``row`` is the body row's index;
    ``headers`` are the column headers, one per column (merged header cells repeated over the
    columns they span), and ``cells`` this row's cells, empty ones left out. ``notes`` are the
    table's footnotes ("a Values in parentheses are for the highest resolution shell."), each one's text.
    """

    table: int
    label: str
    caption: str
    page: int
    row: int
    headers: tuple[str, ...]
    cells: tuple[TableCell, ...]
    notes: tuple[str, ...] = ()

    @property
    def stub(self) -> str:
        """The row's name: its first column's text (or its first cell's, when that column is empty)."""
        first = next((cell for cell in self.cells if cell.col == 0), None) or (self.cells[0] if self.cells else None)
        return first.text if first is not None else ""

    def pairs(self) -> list[tuple[str, str]]:
        """The row as (header, value) pairs, the stub column left out: how a judge should read it."""
        stub_col = self.cells[0].col if self.cells else 0
        return [(cell.header, cell.text) for cell in self.cells if cell.col != stub_col]


@dataclass(frozen=True)
class Passage:
    """A ~250-word block of a document's text that knows exactly where it sits on the page.

    ``text`` is what a reader sees; ``search_text`` adds the paper title in front, for
    search and embedding. ``char_start``/``char_end`` locate ``text`` in the document's
    extracted text; ``rects`` are the boxes of its words merged per line (what the UI
    highlights); ``words`` keep each word's own box so any quote inside the passage can be
    highlighted exactly (ingest and the catalog give a packed :class:`WordBoxes`; any
    sequence of :class:`WordBox` is accepted).
    """

    id: str
    doc_id: str
    ordinal: int
    text: str
    title: str
    page_start: int
    page_end: int
    char_start: int
    char_end: int
    rects: tuple[PageRect, ...]
    content_hash: str
    is_reference: bool = False
    words: Sequence[WordBox] = field(default=(), repr=False, compare=False)
    # What the text is: running "text", a figure or table "caption", a "table" body, or "figure"
    # text (labels drawn inside a figure). Captions and tables are searchable but never spliced
    # into the running text.
    kind: str = "text"
    # The language the text is written in (ISO 639-1, engine/text/language.py): "" when it could not be
    # told, "zxx" when the text layer means nothing (a font's private-use codes).
    language: str = ""
    # For a "table row" passage: its table's label, headers and this row's cells with their boxes.
    table: TableRow | None = field(default=None, compare=False)
    # For a figure's caption (and its labels): the figure's region on its page, drawings, images and labels.
    figure: PageRect | None = field(default=None, compare=False)

    @property
    def search_text(self) -> str:
        return f"{self.title}\n{self.text}" if self.title else self.text

    @property
    def pages(self) -> range:
        return range(self.page_start, self.page_end + 1)

    def rects_for_span(self, start: int, end: int) -> tuple[PageRect, ...]:
        """The line-merged rectangles of the words overlapping ``text[start:end]``; of a table row, one box a
        cell (each word of a row carries its cell's box), so that each cited cell is outlined on its own."""
        words = [w for w in self.words if w.end > start and w.start < end]
        if self.table is not None:
            return tuple(dict.fromkeys(PageRect(w.page, w.rect) for w in words))
        return merge_word_boxes(words)


LIBRARY_SOURCE = "library"
# The setting value (retrieval.embedder) that names the bundled multilingual embedder (engine/embed/e5.py).
MULTILINGUAL_EMBEDDER = "multilingual-e5-small"


@dataclass(frozen=True)
class SearchHit:
    """One retrieved passage, from the library or from an attached datastore.

    ``doc_id`` is the library document id, or the datastore record's original id. ``source`` is
    ``"library"`` or the datastore's name. ``page``/``page_end`` are set for library hits only
    (datastore records have no pages). ``ranks`` records each retriever's 1-based rank
    ("bm25", "dense", "rerank", ...) so a result can be explained.
    """

    passage_id: str
    doc_id: str
    source: str
    bib: Bibliography  # the paper the passage is from
    text: str
    score: float = 0.0
    page: int | None = None
    page_end: int | None = None
    is_reference: bool = False
    ranks: tuple[tuple[str, int], ...] = ()

    @property
    def search_text(self) -> str:
        title = self.bib.title
        return f"{title}\n{self.text}" if title else self.text

    @property
    def is_library(self) -> bool:
        return self.source == LIBRARY_SOURCE


def passage_id(doc_id: str, ordinal: int) -> str:
    """Passage ids name their document and position, so they stay stable across re-ingests."""
    return f"{doc_id}-{ordinal:04d}"


def content_hash(text: str) -> str:
    """The hash that keys cached embeddings: same text, same vector."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()



# --- answers (synthesis) -------------------------------------------------------------------


class AnswerMode(StrEnum):
    """How an answer was produced."""

    WRITTEN = "written"  # the LM wrote it; citations verified by the engine
    DIGEST = "digest"  # themes with verbatim quotes: no LM prose, always faithful
    NO_EVIDENCE = "no evidence"  # retrieval found nothing relevant enough to answer from


@dataclass(frozen=True)
class Reference:
    """One passage an answer was given: ``[n]`` in the text names the cited *paper* ``n``.

    Answers number cited papers 1..k in order of first use; every cited passage of paper ``n``
    carries that ``n`` (see :class:`PaperReference`). A passage that was given but not cited has
    ``n == 0``. ``text`` is the full passage; ``page`` is set for library passages.
    """

    n: int
    passage_id: str
    doc_id: str
    source: str
    bib: Bibliography  # the paper the passage is from
    text: str
    page: int | None = None
    page_end: int | None = None


@dataclass(frozen=True)
class PaperReference:
    """One cited paper: what ``[n]`` in an answer names, with the passages of it that are cited.

    ``pages`` are the (1-based) pages of its cited passages, ascending; ``passage_ids`` its cited
    passages in order of first use. Each :class:`Citation` with this ``n`` names one of them, so a
    click on ``[n]`` in a sentence opens the exact passage that sentence cites.
    """

    n: int
    doc_id: str
    source: str
    bib: Bibliography
    pages: tuple[int, ...] = ()
    passage_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Citation:
    """A checked link from one answer sentence to paper ``n``, through one of its passages (``passage_id``).

    ``quote`` is verbatim ``Reference.text[quote_start:quote_end]``: the passage sentence(s) that
    best support the claim; ``rects`` are that quote's boxes on the page (library passages only).
    ``inserted`` marks citations the verifier attached to a sentence the model left uncited.
    """

    n: int
    passage_id: str
    quote: str
    quote_start: int
    quote_end: int
    support: float
    rects: tuple[PageRect, ...] = ()
    inserted: bool = False
    # The support judge's verdict on this quote: "supported" or "partial" for a kept citation,
    # "contradicted" for a passage listed in AnswerSentence.contradictions.
    verdict: str = "supported"


@dataclass(frozen=True)
class AnswerSentence:
    """One sentence of the answer text (with its ``[n]`` markers) and its verified citations."""

    text: str
    citations: tuple[Citation, ...] = ()
    supported: bool = False
    section: int = 0  # index into Answer.sections
    needs_citation: bool = True  # False for headings and connective sentences
    # The verifier's verdict: "supported", "partial", "unsupported" or "contradicted" (engine.cite.judge.VERDICTS);
    # left empty, it follows ``supported`` (quotes of the digest, sentences saved before verdicts existed).
    support: str = ""
    # Passages the sentence cited (or that were judged) which say the opposite; never shown as [n] markers.
    contradictions: tuple[Citation, ...] = ()

    def __post_init__(self) -> None:
        if not self.support:
            object.__setattr__(self, "support", "supported" if self.supported else "unsupported")


@dataclass(frozen=True)
class StepCost:
    """One LM call: what it sent, what it evaluated (the rest came from the KV cache), how long."""

    step: str  # "draft 1", "feedback", "revise 2", ...
    prompt_tokens: int
    prompt_tokens_evaluated: int
    completion_tokens: int
    seconds_to_first_token: float
    seconds_total: float


@dataclass(frozen=True)
class Answer:
    """A question's answer with everything needed to check it and to show where claims come from.

    ``text`` carries ``[n]`` markers that always resolve to ``papers`` (the cited papers, numbered
    1..k in order of first use, no gaps); ``references`` are the cited passages (each with its
    paper's ``n``); ``contexts`` are all passages given to the model, cited (with their paper's
    ``n``) or not (``n == 0``).
    """

    question: str
    text: str
    sentences: tuple[AnswerSentence, ...]
    references: tuple[Reference, ...]
    mode: AnswerMode
    sections: tuple[str, ...] = ()  # section (theme) headings
    contexts: tuple[Reference, ...] = ()
    notice: str = ""  # shown above the answer: why it is a digest, why there is no answer, ...
    cancelled: bool = False
    timings: tuple[tuple[str, float], ...] = ()  # (stage, seconds) in order
    steps: tuple[StepCost, ...] = ()
    model: str = ""
    settings: tuple[tuple[str, str], ...] = ()
    id: str = ""
    created_at: float = 0.0
    papers: tuple[PaperReference, ...] = ()

    def reference(self, n: int) -> Reference:
        """The first cited passage of paper ``n`` (KeyError if the answer has none)."""
        for ref in self.references:
            if ref.n == n:
                return ref
        raise KeyError(n)

    def paper(self, n: int) -> PaperReference:
        """The cited paper numbered ``n`` (KeyError if the answer has none)."""
        for paper in self.papers:
            if paper.n == n:
                return paper
        raise KeyError(n)

    def passage(self, passage_id: str) -> Reference:
        """A passage the answer was given, cited or not (KeyError if none has this id)."""
        for ref in (*self.references, *self.contexts):
            if ref.passage_id == passage_id:
                return ref
        raise KeyError(passage_id)

    @property
    def unsupported_share(self) -> float:
        """Share of citation-worthy sentences the verifier could not support."""
        worthy = [s for s in self.sentences if s.needs_citation]
        return sum(not s.supported for s in worthy) / len(worthy) if worthy else 0.0


# --- adding files --------------------------------------------------------------------------------


class Outcome(StrEnum):
    """What adding one file did."""

    ADDED = "added"
    UNCHANGED = "unchanged"
    UPDATED = "updated"
    FAILED = "failed"


@dataclass(frozen=True)
class IngestResult:
    """What happened to one file (engine.importer yields one per file it is given)."""

    path: str
    outcome: Outcome
    doc_id: str = ""
    title: str = ""
    pages: int = 0
    passages: int = 0
    reason: str = ""  # why it failed, or a warning (pages needing OCR, a duplicate of another file)
    seconds: float = 0.0


# The boxes are part of this vocabulary: `from engine.types import Rect` keeps working.
__all__ = [
    "LIBRARY_SOURCE", "WORD_FIELDS", "Answer", "AnswerMode", "AnswerSentence", "Citation", "Document",
    "DocumentStatus", "IngestResult", "Outcome", "Page", "PageRect", "PaperReference", "Passage", "Rect",
    "Reference", "SearchHit", "StepCost", "TableCell", "TableRow", "WordBox", "WordBoxes", "content_hash",
    "document_id", "merge_word_boxes", "passage_id",
]
