"""Parse one PDF into metadata, pages and a stream of passages, page by page.

Only a small window of pages is held at a time (running headers are recognised by repeating
in the margins of nearby pages), so a 1,000-page PDF parses in bounded memory.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.errors import IngestError
from engine.ingest import as_printed, glyphs, marks, ocr
from engine.ingest.chunk import Chunker, Numbering
from engine.ingest.figures import FoundFigure, find_figures, has_figure_caption, page_marks
from engine.ingest.layout import TEXT, Line, PageLayout, is_page_furniture, layout_page, margin_signature
from engine.ingest.metadata import DocumentMeta, extract_metadata
from engine.ingest.pdf import TEXT_FLAGS, file_hash, open_pdf
from engine.ingest.regions import CAPTION, FIGURE, TABLE, classify_blocks
from engine.ingest.tables import FoundTable, find_tables, page_may_hold_tables, row_passages
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.text.language import NO_LANGUAGE
from engine.types import Page, PageRect, Passage, Rect, document_id

log = logging.getLogger(__name__)

_REFERENCES_HEAD = re.compile(
    r"^((\d+|[IVX]+)\.?\s*)?(references|bibliography|literature cited|works cited|references and notes|"
    r"reference list|cited literature)\s*:?$", re.I)
# The warning a text layer that means nothing gets (engine/text/language.py).
_UNREADABLE = "a text layer with no readable text"
_FIRST_NUMBERED = re.compile(r"^\[1\]\s*\S")
_FIRST_REFERENCE = re.compile(r"^(\[1\]|1\.?)\s|\b(19|20)\d\d[a-z]?[.)]")
_LETTER_A = re.compile(r"^A\.?$")
_CAPS_APPENDIX_A = re.compile(r"^A\.?\s+[A-Z][A-Z0-9&:\- ]{3,80}$")
_APPENDIX_HEAD = re.compile(
    r"^(([A-Z]|\d+)\.?\s+)?(appendix|appendices|supplementary material|supplemental material)\b", re.I)


@dataclass(frozen=True)
class IngestOptions:
    """How PDFs become passages. Defaults follow the method: ~250-word passages."""

    passage_words: int = 250
    password: str | None = None
    ocr: bool = True  # OCR pages with no text layer when Tesseract is installed
    ocr_language: str = "eng"
    header_window: int = 3  # pages either side searched for a repeating header/footer
    # Worker processes that parse while the caller stores (0: parse in the caller's process, with
    # no time limit). None: QUIRE_PARSE_WORKERS, else up to 2.
    parse_workers: int | None = None
    page_timeout: float = 60.0  # seconds a worker may spend on one page before the file is given up


@dataclass
class ParsedDocument:
    """Everything parsed from one PDF, collected in memory (small files, tests)."""

    doc_id: str
    content_hash: str
    meta: DocumentMeta
    pages: list[Page]
    passages: list[Passage]
    scanned_pages: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class PdfParse:
    """An open PDF whose metadata is known and whose passages are streamed by :meth:`passages`."""

    def __init__(self, path: Path, options: IngestOptions | None = None, content_hash: str | None = None) -> None:
        self.path = path
        self.options = options or IngestOptions()
        self.content_hash = content_hash or file_hash(path)
        self.doc_id = document_id(self.content_hash)
        self.file_size = path.stat().st_size if path.exists() else 0
        self._document = open_pdf(path, self.options.password)
        self.page_count = self._document.page_count
        self.pages: list[Page] = []
        self.scanned_pages: list[int] = []  # 1-based numbers of pages with no text layer left unread
        self.ocr_pages: list[int] = []
        self.warnings: list[str] = []
        self._references_seen = False
        self._tables: dict[int, list[FoundTable]] = {}  # the trusted tables of pages read but not fed yet
        self.table_count = 0
        self._figures: dict[int, list[FoundFigure]] = {}  # each page's captioned figures, by page number
        try:
            # The first two pages are read now: metadata needs them, and they start the stream.
            first_page_dict: dict[str, Any] = {}
            self._opening = [self._read_page(0, first_page_dict)]
            if self.page_count > 1:
                self._opening.append(self._read_page(1))
            self.meta = self._metadata(first_page_dict, self.pages[0].height)
        except IngestError:
            self.close()
            raise
        except Exception as exc:  # MuPDF errors on hostile files: report, never crash the batch
            self.close()
            raise IngestError(str(path), f"the first page could not be read ({exc}); "
                                         "the PDF is damaged, download it again") from None

    def close(self) -> None:
        self._document.close()

    def __enter__(self) -> PdfParse:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- metadata ------------------------------------------------------------------------

    def _metadata(self, page_dict: dict[str, Any], first_height: float) -> DocumentMeta:
        first_text = "\n".join(line.text for line in self._opening[0].lines)
        more = "\n".join(line.text for layout in self._opening[1:] for line in layout.lines)
        try:
            packet = self._document.get_xml_metadata()
        except Exception as exc:  # a damaged metadata stream costs the XMP fields, not the file
            log.warning("XMP metadata of %s unreadable: %s", self.path, exc)
            packet = ""
        try:  # a CrossMark button on the first page names the paper's own DOI
            links = tuple(str(link.get("uri") or "") for link in self._document.load_page(0).get_links())
        except Exception as exc:  # damaged annotations cost the link, not the file
            log.warning("links of %s unreadable: %s", self.path, exc)
            links = ()
        return extract_metadata(self._document.metadata or {}, page_dict, first_height,
                                f"{first_text}\n{more}", first_text, packet, links)

    # --- pages ---------------------------------------------------------------------------

    def _read_page(self, index: int, page_dict: dict[str, Any] | None = None) -> PageLayout:
        """Read one page's words; fill ``page_dict`` with its text dict when asked (first page)."""
        page = self._document.load_page(index)
        width, height = page.rect.width, page.rect.height
        textpage = page.get_textpage(flags=TEXT_FLAGS)
        raw_words = page.get_text("words", textpage=textpage)
        if page_dict is not None:
            page_dict.update(page.get_text("dict", textpage=textpage))
        # The spans' sizes and flags are read only for a page with a word that may carry a mark (and then
        # serve the glyph repair too).
        text_dict = page_dict
        if text_dict is None and marks.may_have_marks(raw_words):
            text_dict = page.get_text("dict", textpage=textpage)
        raw_words = glyphs.repair_words(page, textpage, raw_words, text_dict)
        if text_dict is not None:
            raw_words = marks.without_marks(raw_words, text_dict)
        raw_words = as_printed.attach_drop_caps(raw_words)
        used_ocr = False
        if ocr.has_no_text_layer(page, len(raw_words)):
            if self.options.ocr and ocr.tesseract_available():
                try:
                    raw_words = ocr.ocr_words(page, TEXT_FLAGS, self.options.ocr_language)
                    used_ocr = True
                    self.ocr_pages.append(index + 1)
                except Exception as exc:  # OCR failures must not sink the document
                    log.warning("OCR failed on %s page %d: %s", self.path, index + 1, exc)
            if not used_ocr:
                self.scanned_pages.append(index + 1)
        # Words come in the unrotated page's coordinates: a page turned by /Rotate (a landscape table
        # page) is laid out in those, or its columns and margins are measured against the wrong width.
        flat = page.cropbox if page.rotation else page.rect
        layout = layout_page(index + 1, flat.width, flat.height, raw_words, classify_blocks)
        if page_may_hold_tables(layout):
            tables = find_tables(layout)
            if tables:
                self._tables[index + 1] = tables
        # A turned page's marks are in other coordinates than its words: its figures are not placed.
        if not page.rotation and has_figure_caption(layout):
            try:
                figures = find_figures(layout, page_marks(page))
            except Exception as exc:  # a page whose drawings cannot be read keeps its captions as text
                log.warning("figures of %s page %d unreadable: %s", self.path, index + 1, exc)
                figures = []
            if figures:
                self._figures[index + 1] = figures
        self.pages.append(Page(self.doc_id, index + 1, width, height,
                               sum(len(line.words) for line in layout.lines),
                               has_text_layer=bool(raw_words) and not used_ocr, ocr_used=used_ocr))
        return layout

    def passages(self, progress: ProgressCallback = no_progress,
                 cancel: CancelToken | None = None) -> Iterator[Passage]:
        """Yield passages in reading order while reading the PDF one page at a time."""
        numbering = Numbering()
        chunker = Chunker(self.doc_id, self.meta.bib.title, self.options.passage_words, numbering=numbering)
        # Captions, tables and figure text become passages of their own kind, never mixed into the text.
        others = {kind: Chunker(self.doc_id, self.meta.bib.title, self.options.passage_words, kind=kind,
                                numbering=numbering) for kind in (CAPTION, TABLE, FIGURE)}
        window = self.options.header_window
        ahead: deque[PageLayout] = deque(self._opening)
        signatures: dict[int, set[str]] = {}
        for layout in self._opening:
            self._remember_margins(layout, signatures)
        next_index = len(self._opening)
        footnotes: list[_HeldLine] = []  # read after the paragraph they interrupt, not inside it
        while ahead:
            while next_index < self.page_count and len(ahead) <= window:
                if cancel is not None:
                    cancel.check()
                try:
                    layout = self._read_page(next_index)
                except Exception as exc:  # one unreadable page costs that page, not the paper
                    self.warnings.append(f"page {next_index + 1} could not be read ({exc})")
                    layout = PageLayout(next_index + 1, 1.0, 1.0, [], set())
                ahead.append(layout)
                self._remember_margins(layout, signatures)
                next_index += 1
            current = ahead.popleft()
            repeated: set[str] = set()
            for number in range(current.number - window, current.number + window + 1):
                if number != current.number:
                    repeated |= signatures.get(number, set())
            self._feed(chunker, others, current, repeated, footnotes)
            signatures.pop(current.number - window, None)
            yield from self._flag_unreadable(self._with_figures(chunker.passages()))
            progress(Progress("parse", current.number, self.page_count, self.path.name))
        _release(chunker, footnotes)
        for other in others.values():
            other.start_section(is_reference=False)
        yield from self._flag_unreadable(self._with_figures(chunker.finish()))

    def _with_figures(self, passages: Iterable[Passage]) -> Iterator[Passage]:
        """``passages``, a figure's caption and labels each with the figure's region on its page."""
        for passage in passages:
            figures = self._figures.get(passage.page_start) if passage.kind in (CAPTION, FIGURE) else None
            if figures:
                figure = figure_of(passage, figures)
                if figure is not None:
                    passage = replace(passage, figure=PageRect(figure.page, figure.region))
            yield passage

    def _flag_unreadable(self, passages: Iterable[Passage]) -> Iterator[Passage]:
        """``passages``, with a warning (once) when one's text layer means nothing: a font's own codes with
        no Unicode map. Such a passage is kept (its boxes still show where it is) but not indexed as words."""
        for passage in passages:
            if passage.language == NO_LANGUAGE and not any(w.startswith(_UNREADABLE) for w in self.warnings):
                self.warnings.append(f"{_UNREADABLE} on page {passage.page_start}: its font gives private-use "
                                     "codes instead of letters, so it is not searchable by its words; "
                                     "OCR the PDF (ocrmypdf --force-ocr) to search it")
            yield passage

    @staticmethod
    def _remember_margins(layout: PageLayout, signatures: dict[int, set[str]]) -> None:
        lines = layout.lines
        signatures[layout.number] = {margin_signature(lines[index], layout.height) for index in layout.margin_lines()}

    def _feed(self, chunker: Chunker, others: dict[str, Chunker], layout: PageLayout, repeated: set[str],
              footnotes: list[_HeldLine]) -> None:
        late = self.page_count <= 3 or layout.number >= 0.4 * self.page_count
        first_footnote = len(layout.lines) - layout.footnote_lines
        new_block = True
        for other in others.values():
            other.start_section(is_reference=False)  # captions, tables and figures end with their page
        margin = set(layout.margin_lines())
        # A trusted table's lines are replaced by its rows, given where its first line was.
        tables = self._tables.pop(layout.number, [])
        table_at = {min(table.lines): table for table in tables}
        in_tables = set().union(*(table.lines for table in tables)) if tables else set()
        # A table's footnotes are read as its legend: a caption passage of their own, never the prose's.
        notes = {index for table in tables for index in table.note_lines}
        notes_open = {min(table.note_lines) for table in tables if table.note_lines}
        for index, line in enumerate(layout.lines):
            if index in in_tables:
                if index in table_at:
                    chunker.numbering.ready.extend(row_passages(
                        table_at[index], self.table_count, self.doc_id, self.meta.bib.title, chunker.numbering))
                    self.table_count += 1
                continue
            if index in margin and is_page_furniture(line, layout.width, layout.height, repeated, layout.number):
                continue
            kind = CAPTION if index in notes else layout.kinds[index] if layout.kinds else "text"
            # A reference list's entries are short, numeric lines too; they stay in the list.
            if kind in others and not (chunker.is_reference and kind != CAPTION):
                if index in layout.region_starts or index in notes_open:
                    others[kind].start_section(is_reference=False)
                others[kind].add_line(line.words, layout.number, line.rect, new_block=index in layout.block_starts)
                continue
            if index in layout.block_starts:
                new_block = True
            if index >= first_footnote:
                footnotes.append(_HeldLine(line, layout.number, new_block))
                new_block = False
                continue
            if footnotes and new_block and chunker.at_sentence_end:
                _release(chunker, footnotes)
            # Only short lines can be headings; a list without one starts with "[1]".
            if len(line.words) <= 12 or line.words[0][TEXT].startswith("[1]"):
                following = layout.lines[index + 1].text if index + 1 < len(layout.lines) else ""
                # After the list has ended, a second one needs entries to show for it (a table
                # cell reading "Bibliography" in an appendix is not one).
                section = section_change(line.text, following, in_references=chunker.is_reference,
                                         late=late and not self._references_seen, new_block=new_block)
                if section is not None:
                    _release(chunker, footnotes)
                    chunker.start_section(is_reference=section)
                    self._references_seen = True
            chunker.add_line(line.words, layout.number, line.rect, new_block=new_block)
            new_block = False


def figure_of(passage: Passage, figures: list[FoundFigure]) -> FoundFigure | None:
    """The figure a caption passage opens (its first line is in the caption), or that holds all of a figure
    text passage's lines; None when there is none."""
    lines = [rect for page, rect in passage.rects if page == passage.page_start]
    if not lines:
        return None
    for figure in figures:
        if passage.kind == CAPTION and _centre_in(lines[0], figure.caption):
            return figure
        if passage.kind == FIGURE and all(_centre_in(line, figure.region) for line in lines):
            return figure
    return None


def _centre_in(rect: Rect, area: Rect) -> bool:
    x, y = (rect.x0 + rect.x1) / 2, (rect.y0 + rect.y1) / 2
    return area.x0 <= x <= area.x1 and area.y0 <= y <= area.y1


def section_change(text: str, following: str, *, in_references: bool, late: bool, new_block: bool) -> bool | None:
    """True where the reference list starts, False where an appendix follows it, None elsewhere.

    ``late`` says the page lies in the last 60% of the document. Earlier, a "References" line is
    more likely a table-of-contents entry, so it counts only when the line after it reads like
    the first entry of a list (long papers with appendices put their references early).
    """
    if in_references:
        return False if _APPENDIX_HEAD.match(text) or (new_block and _is_appendix_a(text, following)) else None
    if _REFERENCES_HEAD.match(text) and (late or _FIRST_REFERENCE.search(following)):
        return True
    # RevTeX and similar styles print the list with no heading at all: "[1] Hu W., Barkana R., ...".
    if late and new_block and _FIRST_NUMBERED.match(text):
        return True
    return None


def _is_appendix_a(text: str, following: str) -> bool:
    """The first lettered appendix heading: "A INTERVIEWS WITH ...", or "A" set apart from its title."""
    if _LETTER_A.match(text):
        words = following.split()
        return 0 < len(words) <= 8 and following[:1].isupper() and not following.endswith(".")
    return bool(_CAPS_APPENDIX_A.match(text))


@dataclass(frozen=True)
class _HeldLine:
    """A footnote line kept back until the running text reaches the end of a paragraph."""

    line: Line
    page: int
    new_block: bool


def _release(chunker: Chunker, footnotes: list[_HeldLine]) -> None:
    """Feed the footnotes held back so far: at a paragraph end, a section change or the end."""
    for held in footnotes:
        chunker.add_line(held.line.words, held.page, held.line.rect, new_block=held.new_block)
    footnotes.clear()


def parse_pdf(path: Path | str, options: IngestOptions | None = None) -> ParsedDocument:
    """Parse a whole PDF into memory; for tests and small files (the store streams instead)."""
    with PdfParse(Path(path), options) as parse:
        passages = list(parse.passages())
        return ParsedDocument(parse.doc_id, parse.content_hash, parse.meta, parse.pages, passages,
                              parse.scanned_pages, parse.warnings)
