"""What the engine client runs on its worker, and the dialogs' checks of files a user picks.

Plain functions and values, no Qt: each takes the :class:`~engine.service.Engine` (or nothing)
and returns what a widget shows, so they can be tested without a window.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from engine.errors import DocumentNotFoundError, EngineError
from engine.links import LinkError, OpenLink, quote_span
from engine.progress import Progress
from engine.render.tables import DocumentTable
from engine.service import Engine
from engine.types import LIBRARY_SOURCE, Answer, Citation, IngestResult, Outcome, PageRect, Reference
from engine.watch import SyncReport


class ProgressThrottle:
    """Forwards at most one progress report per ``interval`` seconds.

    The first report of a stage and the last one (``done == total``) always pass, so the UI
    never shows a stale file name or a bar stuck short of the end; the pages in between are
    what gets dropped.
    """

    def __init__(self, forward: Callable[[Progress], None], interval: float = 0.1,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._forward = forward
        self._interval = interval
        self._clock = clock
        self._last_time = float("-inf")
        self._last_stage = ""

    def __call__(self, progress: Progress) -> None:
        now = self._clock()
        finished = progress.total > 0 and progress.done >= progress.total
        if progress.stage == self._last_stage and not finished and now - self._last_time < self._interval:
            return
        self._last_time = now
        self._last_stage = progress.stage
        self._forward(progress)


def describe_failures(failures: Sequence[IngestResult], limit: int = 8) -> str:
    """One message naming the files that could not be added and why (headline, blank line, details)."""
    if len(failures) == 1:
        headline = "This file could not be added:"
    else:
        headline = f"{len(failures)} files could not be added:"
    lines = [f"{Path(result.path).name}: {result.reason}" for result in failures[:limit]]
    if len(failures) > limit:
        lines.append(f"…and {len(failures) - limit} more; the Status column of the library shows each reason.")
    return headline + "\n\n" + "\n".join(lines)


# --- the Settings dialog's checks of the files a user picks (they need no engine) ----------------


def metadata_problem(**field: object) -> str:
    """``""`` when the engine would store this one metadata field as typed, else its reason (Edit Details
    checks each field before closing, so nothing typed is lost to a refusal after the dialog is gone)."""
    from engine.store.edits import clean_metadata

    try:
        clean_metadata(**field)  # type: ignore[arg-type]
    except EngineError as exc:
        return str(exc)
    return ""


def check_model_file(path: str) -> str:
    """``""`` when ``path`` is empty or a GGUF llama.cpp can run, else why not (for the Model file field)."""
    if not path:
        return ""
    from engine.generate.gguf import validate_gguf  # llama.cpp is loaded only to check a file

    try:
        validate_gguf(Path(path).expanduser())
    except EngineError as exc:
        return str(exc)
    except Exception as exc:  # llama.cpp's own probe may fail in its own ways: still name the file
        return f"{path}: llama.cpp cannot load it ({type(exc).__name__}: {exc})."
    return ""


def is_small_model_file(path: str) -> bool:
    """Whether the model at ``path`` (empty: the bundled one) is too small to write answers."""
    from engine.models import language_model_file

    chosen = language_model_file(None, path)
    return chosen.path is not None and chosen.small


@dataclass(frozen=True)
class PassageLocation:
    """Where a cited passage is: its PDF and page, its line boxes and its quote's boxes.

    ``path`` is empty for datastore passages, which have no PDF.
    """

    reference: Reference
    path: str = ""
    page: int = 0
    passage_rects: tuple[PageRect, ...] = ()
    quote_rects: tuple[PageRect, ...] = ()
    quote: str = ""
    removed: bool = False  # the paper was removed from the library since the answer was given
    figure_rects: tuple[PageRect, ...] = ()  # the region of the figure a cited caption names


def locate_passage(engine: Engine, *, reference: Reference, citation: Citation | None) -> PassageLocation:
    """Runs on the worker: the stored rectangles of the passage and of the supporting quote."""
    quote = citation.quote if citation else ""
    if reference.source != LIBRARY_SOURCE:
        return PassageLocation(reference, quote=quote)
    try:
        passage = engine.passage(reference.passage_id)
        document = engine.document(reference.doc_id)
    except DocumentNotFoundError:
        # Removed since: the answer still holds the passage text and the quote, so show those.
        return PassageLocation(reference, quote=quote, removed=True)
    quote_rects: tuple[PageRect, ...] = citation.rects if citation else ()
    if citation and not quote_rects and quote:
        start = passage.text.find(quote)  # the reference text may carry a title prefix; find the quote itself
        if start >= 0:
            quote_rects = passage.rects_for_span(start, start + len(quote))
    shown = quote_rects or passage.rects
    page = shown[0].page if shown else (reference.page or passage.page_start)
    figure = (passage.figure,) if passage.figure is not None else ()
    return PassageLocation(reference, document.path, page, passage.rects, quote_rects, quote, figure_rects=figure)


def locate_link(engine: Engine, link: OpenLink) -> PassageLocation:
    """Runs on the worker: where a ``quire://open`` link points, by the path a citation click takes.

    A passage the library no longer has (the paper was read again and cut differently) still opens the
    page, without a highlight; an unknown paper or a page past the paper's end is a LinkError.
    """
    try:
        document = engine.document(link.paper)
    except DocumentNotFoundError:
        raise LinkError(f"The link names a paper that is not in this library ({engine.paths.home}): paper "
                        f"{link.paper}. Add the paper, or open the library the link came from "
                        "(quire-desktop --home DIR).") from None
    title = document.bib.title or Path(document.path).name
    if document.page_count and link.page > document.page_count:
        raise LinkError(f"The link points at page {link.page} of “{title}”, which has {document.page_count} "
                        "pages.")
    page_only = PassageLocation(Reference(0, link.passage, document.id, LIBRARY_SOURCE, document.bib, ""),
                                document.path, link.page)
    if not link.passage:
        return page_only
    try:
        passage = engine.passage(link.passage)
    except DocumentNotFoundError:
        return page_only
    reference = Reference(0, passage.id, document.id, LIBRARY_SOURCE, document.bib, passage.text,
                          passage.page_start, passage.page_end)
    span = quote_span(passage.text, link.quote)
    citation = None
    if span:
        quote = passage.text[span[0]:span[1]]
        citation = Citation(0, passage.id, quote, span[0], span[1], 1.0, passage.rects_for_span(*span))
    location = locate_passage(engine, reference=reference, citation=citation)
    shown = location.quote_rects or location.passage_rects
    if any(on_page == link.page for on_page, _ in shown):
        location = replace(location, page=link.page)  # a quote over two pages opens where the link says
    return location


@dataclass(frozen=True)
class FileTables:
    """The tables of the paper a PDF holds; ``in_library`` is False when no paper of the library is that file."""

    path: str
    tables: tuple[DocumentTable, ...] = ()
    in_library: bool = True


def tables_in_file(engine: Engine, path: str) -> FileTables:
    """Runs on the worker: the viewer knows the PDF it shows, not which paper that is, so the file says."""
    try:
        document = engine.document_at(path) if path else None
        if document is None:
            return FileTables(path, in_library=False)
        return FileTables(path, tuple(engine.tables(document.id)))
    except DocumentNotFoundError:  # removed meanwhile (by another program, say): the viewer is closing it
        return FileTables(path, in_library=False)


def datastore_counts(engine: Engine) -> list[tuple[str, int]]:
    """(name, papers) for each attached datastore."""
    return [(info.name, info.records) for info in engine.datastores()]


def server_datastore_locations(engine: Engine) -> list[tuple[str, str]]:
    """(name, user@host/database) of each connected server datastore, read without connecting."""
    from engine.datastore.server.connection import shown

    entries = engine.datastore_registry.servers.entries()
    return [(name, shown(entry.conninfo)) for name, entry in sorted(entries.items())]


def render_answer(answer: Answer, kind: str) -> str:
    """Markdown with its references, or the cited papers as BibTeX, RIS or CSL-JSON."""
    from engine.render.exports import FORMATS, export_answer
    from engine.render.markdown import to_markdown

    if kind in FORMATS:
        return export_answer(answer, kind)
    return to_markdown(answer)


def describe_pass(report: SyncReport) -> str:
    """The status-bar line for one pass over the watched folders ('' when it changed nothing worth saying)."""
    counts = {outcome: sum(r.outcome == outcome for r in report.results) for outcome in Outcome}
    parts = [f"{counts[Outcome.ADDED]} added" if counts[Outcome.ADDED] else "",
             f"{counts[Outcome.UPDATED]} updated" if counts[Outcome.UPDATED] else "",
             f"{counts[Outcome.FAILED]} could not be read" if counts[Outcome.FAILED] else "",
             f"{len(report.moved)} moved" if report.moved else "",
             f"{len(report.missing)} missing (file gone; Library → Watched Folders… removes them)"
             if report.missing else "",
             f"{len(report.pruned)} removed" if report.pruned else ""]
    parts += [f"{folder} is unavailable: {why}" for folder, why in report.unavailable]
    said = ", ".join(part for part in parts if part)
    return f"Watched folders: {said}" if said else ""
