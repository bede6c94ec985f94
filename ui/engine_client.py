"""The UI's one door into the engine.

:class:`EngineClient` owns the :class:`~engine.service.Engine` and runs every call on one of two
serial worker threads, its lanes: long jobs (ingest, answers, embedding, downloads) on one, quick
ones (catalog reads and edits, settings, the model and datastore lists) on the other, which has an
engine of its own over the same library, so an edit never waits for an answer to finish. Each
engine is only ever called from its own lane. Results, progress and errors come back as signals,
always emitted on the thread that created the client, so widgets may connect to them directly.
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from engine.errors import Cancelled
from engine.links import OpenLink
from engine.progress import CancelToken, Progress
from engine.request import AskRequest
from engine.service import Engine
from engine.table_types import PaperTable, TableColumn
from engine.types import Answer, Citation, Document, Reference
from ui.engine_model_requests import ModelRequests
from ui.engine_tasks import (
    FileTables,
    PassageLocation,
    ProgressThrottle,
    datastore_counts,
    locate_link,
    locate_passage,
    render_answer,
    server_datastore_locations,
    tables_in_file,
)
from ui.engine_worker import (
    ADOPT,
    ASK,
    CHECK,
    DATASTORE,
    EDIT,
    EMBED,
    INGEST,
    LOOKUP,
    POLL,
    QUICK_KINDS,
    REFRESH,
    REMOVE,
    SETTINGS,
    ZOTERO,
    EngineWorker,
    Job,
)

if TYPE_CHECKING:
    from engine.cite.claims import ClaimCheck
    from engine.render.highlights import AnnotatedPaper
    from engine.watch import MissingFile, SyncReport, WatchedFolder
    from engine.watch.events import FolderEvents
    from engine.zotero import ZoteroReport

log = logging.getLogger(__name__)
T = TypeVar("T")

DEMO_DATASTORE = "cs-sample"


def quick_lane_engine(engine: Engine) -> Engine:
    """A second engine over ``engine``'s library and settings, with its own SQLite connections.

    The catalog is in WAL mode, so this engine's reads never wait for the other's writes and its
    small writes wait only for the other's current transaction, not its whole job.
    """
    sibling = Engine(engine.paths.home, settings=engine.settings)
    sibling.paths = engine.paths  # the same settings file, wherever the platform keeps it
    return sibling


class EngineClient(QObject, ModelRequests):
    """Runs engine calls on two serial lanes (long jobs, quick ones) and reports back through signals."""

    progress = Signal(str, int, int, str)  # stage, done, total, label
    ingest_result = Signal(object)  # IngestResult, one per file
    documents_changed = Signal(list)  # list[Document], the whole library
    error = Signal(str)  # a message for the user, phrased by the engine
    notice = Signal(str)  # news for the user, not an error: ingest switched the library's embedder
    cancelled = Signal(str)
    busy_changed = Signal(bool)  # any job queued or running
    ingesting_changed = Signal(bool)  # an add_paths batch queued or running
    asking_changed = Signal(bool)  # a question queued or being answered
    answer_token = Signal(str)  # a piece of the answer being written
    answer_stage = Signal(str)  # "retrieving", "reranking", "drafting", ...
    job_finished = Signal(str)  # the kind of job that just ended, whatever happened
    embedding_finished = Signal(bool)  # True: every passage is embedded; False: paused (it resumes later)
    # (request, PaperRow): a finished row of a table being built, and (request, stage, done, total):
    # stage "screening" (papers searched for the question) or "table" (rows filled in); ``request``
    # is what :meth:`table` returned. Emitted from the worker thread; receivers on
    # the UI thread get them queued, in order.
    table_row = Signal(int, object)
    table_progress = Signal(int, str, int, int)

    settings_changed = Signal()  # saved settings (a new model, say), after the long lane has them queued
    library_changed = Signal()  # the library changed since the last look: by this app or another process

    _submit = Signal(object)
    _submit_quick = Signal(object)

    def __init__(self, engine: Engine, parent: QObject | None = None, *, progress_interval: float = 0.1,
                 refresh_interval: float = 1.0, quick_engine: Engine | None = None) -> None:
        super().__init__(parent)
        self._engine = engine
        # Why the settings file was set aside, if it was: read here, before the lanes own the engine.
        self.settings_notice = engine.settings_notice
        self._quick_engine = quick_engine if quick_engine is not None else quick_lane_engine(engine)
        self._pending: Counter[str] = Counter()
        self._ingest_tokens: list[CancelToken] = []  # one per queued or running batch, oldest first
        self._ask_tokens: list[CancelToken] = []
        self._embed_tokens: list[CancelToken] = []
        self._progress_interval = progress_interval
        self._callbacks: dict[int, tuple[Callable[[Any], None] | None, Callable[[], None] | None]] = {}
        self._tickets = itertools.count(1)
        self._closed = False
        self._library_version: object = None
        self._polling = False
        self._watch = QTimer(self)
        self._watch.timeout.connect(self._poll_library)

        self._thread = QThread()
        self._thread.setObjectName("quire-engine")
        self._worker = EngineWorker(engine, progress_interval, refresh_interval)
        self._worker.moveToThread(self._thread)
        self._thread.finished.connect(self._worker.deleteLater)
        self._thread.started.connect(self._worker.lower_priority)
        # Queued connections both ways: jobs run in submission order on the worker thread, and
        # everything the worker reports is re-emitted here, on the UI thread.
        self._submit.connect(self._worker.run)
        self._worker.progress.connect(self._on_progress)
        self._worker.ingest_result.connect(self.ingest_result)
        self._worker.documents.connect(self.documents_changed)
        self._worker.failed.connect(self.error)
        self._worker.notice.connect(self._on_notice)
        self._worker.cancelled.connect(self.cancelled)
        self._worker.finished.connect(self._on_finished)
        self._worker.settled.connect(self._on_settled)
        self._worker.token.connect(self.answer_token)
        self._worker.stage.connect(self.answer_stage)

        # The quick lane keeps the normal priority: it must answer while the long lane keeps
        # every core busy.
        self._quick_thread = QThread()
        self._quick_thread.setObjectName("quire-engine-quick")
        self._quick_worker = EngineWorker(self._quick_engine, progress_interval, refresh_interval)
        self._quick_worker.moveToThread(self._quick_thread)
        self._quick_thread.finished.connect(self._quick_worker.deleteLater)
        self._submit_quick.connect(self._quick_worker.run)
        self._quick_worker.documents.connect(self.documents_changed)
        self._quick_worker.failed.connect(self.error)
        self._quick_worker.cancelled.connect(self.cancelled)
        self._quick_worker.finished.connect(self._on_finished)
        self._quick_worker.settled.connect(self._on_settled)
        self._thread.start()
        self._quick_thread.start()

    @property
    def home(self) -> Path:
        """The library folder; a plain value, safe to read from the UI thread."""
        return self._engine.paths.home

    @property
    def busy(self) -> bool:
        return sum(count for kind, count in self._pending.items() if kind != POLL) > 0

    @property
    def ingesting(self) -> bool:
        return self._pending[INGEST] > 0

    @property
    def asking(self) -> bool:
        return self._pending[ASK] > 0

    @property
    def embedding(self) -> bool:
        return self._pending[EMBED] > 0

    # --- requests (call from the UI thread) --------------------------------------------------

    def add_paths(self, paths: Sequence[str | Path]) -> None:
        """Ingest PDF files and folders; :meth:`cancel` stops the batch between pages."""
        token = CancelToken()
        self._ingest_tokens.append(token)
        self._post(INGEST, partial(self._worker.ingest, [str(path) for path in paths], token))

    def refresh(self) -> None:
        """Re-read the library; the answer arrives as :attr:`documents_changed`."""
        self._post(REFRESH, self._quick_worker.refresh)

    def watch_library(self, interval_ms: int = 1000) -> None:
        """Look every ``interval_ms`` whether the library changed (another process ingested, removed, edited or
        answered: the CLI, the MCP server, a watched folder) and emit :attr:`library_changed` when it did.

        The look is one cheap read (``Engine.library_version``) on the quick lane, never on the UI
        thread, and the next is only sent once the last came back, so a busy lane never piles them up. Call it
        before the first :meth:`refresh`: the first look goes at once and is the baseline, so a change made
        after it is seen by that refresh or by the next look.
        """
        self._poll_library()
        self._watch.start(interval_ms)

    def _poll_library(self) -> None:
        if self._polling or self._closed:
            return
        self._polling = True

        def look(engine: Engine) -> object:
            try:
                return engine.library_version()
            except sqlite3.Error as exc:  # a look that fails says nothing; the next one tries again
                log.info("Could not check the library for changes: %s", exc)
                return None

        self.call(POLL, look, self._on_library_version, self._poll_failed)

    def _on_library_version(self, version: object) -> None:
        self._polling = False
        if version is None:
            return
        changed = self._library_version is not None and version != self._library_version
        self._library_version = version
        if changed:
            self.library_changed.emit()

    def _poll_failed(self) -> None:
        self._polling = False

    def remove(self, doc_id: str) -> None:
        """Remove one document (not its file) from the library."""
        self._post(REMOVE, partial(self._quick_worker.remove, doc_id))

    def cancel(self) -> None:
        """Stop the running ingestion and drop the queued ones; finished files are kept."""
        for token in self._ingest_tokens:
            token.cancel()

    def cancel_answer(self) -> None:
        """Stop answering; the engine returns what it has (marked cancelled) or raises Cancelled."""
        for token in self._ask_tokens:
            token.cancel()

    def call(self, kind: str, work: Callable[[Engine], T], on_result: Callable[[T], None] | None = None,
             on_failure: Callable[[], None] | None = None) -> None:
        """Run ``work(engine)`` on the lane for ``kind``; ``on_result`` gets its value on the UI thread.

        A failure goes to :attr:`error` like any other (then ``on_failure`` runs), so callers
        only handle success.
        """
        ticket = next(self._tickets)
        self._callbacks[ticket] = (on_result, on_failure)
        worker = self._quick_worker if kind in QUICK_KINDS else self._worker
        self._post(kind, partial(worker.call, ticket, work))

    def run_quick(self, work: Callable[[], T], on_result: Callable[[T], None]) -> None:
        """Run ``work()`` (a check that needs no engine, such as probing a model file) on the quick
        lane, so no dialog starts a thread of its own."""
        self.call(SETTINGS, lambda _engine: work(), on_result)

    def ask(self, request: AskRequest, on_answer: Callable[[Answer], None], *,
            on_failure: Callable[[], None] | None = None) -> None:
        """Answer ``request`` (the engine checks it, answers and keeps it in the history); tokens and
        stages stream as :attr:`answer_token` / :attr:`answer_stage`."""
        token = CancelToken()
        self._ask_tokens.append(token)
        worker = self._worker

        def work(engine: Engine) -> Answer:
            return engine.ask(request, on_token=worker.token.emit, on_stage=worker.stage.emit, cancel=token)

        self.cancel_embedding()  # answering comes first; embedding resumes afterwards
        self.call(ASK, work, on_answer, on_failure)

    @staticmethod
    def default_table_columns() -> tuple[TableColumn, ...]:
        """The columns a new table starts with: the paper's answer, method, data or sample, main result."""
        from engine.synthesis.paper_table import default_columns

        return default_columns()

    def table(self, question: str, columns: Sequence[TableColumn], on_table: Callable[[PaperTable], None], *,
              doc_ids: Sequence[str] | None = None, mode: str = "auto",
              on_failure: Callable[[], None] | None = None) -> int:
        """Build a table of papers; rows stream as :attr:`table_row`, progress as :attr:`table_progress`,
        both tagged with the request number returned. It runs as a question does: :meth:`cancel_answer`
        stops it, keeping the finished rows."""
        request = next(self._tickets)
        token = CancelToken()
        self._ask_tokens.append(token)
        ids = list(doc_ids) if doc_ids is not None else None

        def progress(report: Progress) -> None:
            self.table_progress.emit(request, report.stage, report.done, report.total)

        def work(engine: Engine) -> PaperTable:
            return engine.table(question, list(columns), doc_ids=ids, mode=mode,
                                on_row=lambda row: self.table_row.emit(request, row), progress=progress, cancel=token)

        self.cancel_embedding()  # the table comes first; embedding resumes afterwards
        self.call(ASK, work, on_table, on_failure)
        return request

    def embed_pending(self) -> None:
        """Embed passages not yet in the vector index, in the background, reporting progress as
        stage "embed"; a question or :meth:`cancel_embedding` pauses it (it resumes where it stopped)."""
        if self._embed_tokens:
            return
        token = CancelToken()
        self._embed_tokens.append(token)
        throttle = ProgressThrottle(self._worker.progress.emit, self._progress_interval)

        def work(engine: Engine) -> bool:
            try:
                engine.embed_pending(throttle, token)
            except Cancelled:
                return False  # paused, not failed: nothing to tell the user
            return True

        self.call(EMBED, work, self.embedding_finished.emit)

    def cancel_embedding(self) -> None:
        for token in self._embed_tokens:
            token.cancel()

    def locate(self, reference: Reference, citation: Citation | None,
               on_result: Callable[[PassageLocation], None]) -> None:
        """Find where ``reference`` (and the quote ``citation`` relies on) sits in its PDF."""
        self.call(LOOKUP, partial(locate_passage, reference=reference, citation=citation), on_result)

    def locate_link(self, link: OpenLink, on_result: Callable[[PassageLocation], None]) -> None:
        """Find the page, passage and quote a ``quire://open`` link points at; a bad one reaches :attr:`error`."""
        self.call(LOOKUP, partial(locate_link, link=link), on_result)

    def tables_in_file(self, path: str, on_result: Callable[[FileTables], None],
                       on_failure: Callable[[], None] | None = None) -> None:
        """The tables of the paper the PDF at ``path`` holds, as ingest read them."""
        self.call(LOOKUP, partial(tables_in_file, path=path), on_result, on_failure)

    def list_answers(self, on_result: Callable[[list[Any]], None]) -> None:
        """Past questions, newest first, as summaries (``id``, ``question``, ``created_at``, ``mode``)."""
        self.call(LOOKUP, lambda engine: engine.answers(), on_result)

    def load_answer(self, answer_id: str, on_result: Callable[[Answer], None]) -> None:
        """A past answer, in full, as it was given."""
        self.call(LOOKUP, lambda engine: engine.answer(answer_id), on_result)

    def list_datastores(self, on_result: Callable[[list[tuple[str, int]]], None]) -> None:
        """Attached datastores as (name, paper count)."""
        self.call(LOOKUP, datastore_counts, on_result)

    def list_server_datastores(self, on_result: Callable[[list[tuple[str, str]]], None]) -> None:
        """Connected server datastores as (name, where: user@host/database); the servers are not asked."""
        self.call(LOOKUP, server_datastore_locations, on_result)

    def figure_images(self, answer: Answer, on_result: Callable[[dict[str, bytes]], None]) -> None:
        """Pictures of the figures ``answer`` cites, by caption passage id (none cited: an empty dict)."""
        self.call(LOOKUP, lambda engine: engine.figure_images(answer), on_result)

    def render_answer(self, answer: Answer, kind: str, on_result: Callable[[str], None]) -> None:
        """``answer`` as Markdown (with references) or as BibTeX for the papers it cites."""
        self.call(LOOKUP, lambda _: render_answer(answer, kind), on_result)

    def add_demo(self, on_datastore: Callable[[object], None] | None = None, *, with_datastore: bool = False) -> None:
        """The bundled demo papers into the library; with ``with_datastore`` the sample CS datastore is
        attached too (searchable by keyword at once, not embedded: that would take long on a laptop).
        The datastore is opt-in: once attached it answers every "Everything" question."""
        from engine.demo import demo_papers

        self.add_paths(demo_papers())
        if with_datastore:
            self.add_demo_datastore(on_datastore)

    def add_demo_datastore(self, on_datastore: Callable[[object], None] | None = None) -> None:
        """Attach the bundled sample CS datastore (keyword search at once; not embedded), unless it is attached;
        its progress comes as the stages of attaching a datastore ("import", "bm25")."""
        from engine.datastore.bundled import bundled_datastore

        throttle = ProgressThrottle(self._worker.progress.emit, self._progress_interval)

        def attach(engine: Engine) -> object:
            if any(info.name == DEMO_DATASTORE for info in engine.datastores()):
                return None
            return engine.add_datastore(bundled_datastore(), DEMO_DATASTORE, embed=False, progress=throttle)

        self.call(DATASTORE, attach, on_datastore)

    def delete_answer(self, answer_id: str, on_deleted: Callable[[object], None] | None = None) -> None:
        """Delete a past question and its answer from the history."""
        self.call(LOOKUP, lambda engine: engine.delete_answer(answer_id), on_deleted)

    def export_documents(self, doc_ids: Sequence[str], format_name: str, on_result: Callable[[str], None]) -> None:
        """The references of these papers (all papers when empty) as ``format_name`` text."""
        from engine.render.exports import export_documents

        def export(engine: Engine) -> str:
            documents = [engine.document(doc_id) for doc_id in doc_ids] if doc_ids else engine.documents()
            return export_documents(documents, format_name)
        self.call(LOOKUP, export, on_result)

    def update_metadata(self, doc_id: str, on_saved: Callable[[Document], None] | None = None, *,
                        title: str | None = None, authors: Sequence[str] | None = None,
                        year: int | str | None = None, doi: str | None = None, venue: str | None = None) -> None:
        """Correct a paper's title, authors, year, DOI or venue (None leaves a field as it is)."""
        self.call(EDIT, lambda engine: engine.update_metadata(doc_id, title=title, authors=authors, year=year,
                                                              doi=doi, venue=venue), on_saved)

    def sync_watched(self, on_report: Callable[[SyncReport], None], *, prune: bool = False,
                     on_failure: Callable[[], None] | None = None) -> None:
        """Catch up with the watched folders on the long lane, as an ingest ("n of N" progress, Cancel)."""
        token = CancelToken()
        self._ingest_tokens.append(token)
        worker, interval = self._worker, self._progress_interval

        def work(engine: Engine) -> SyncReport:
            try:
                report = engine.sync_watched(prune=prune, progress=ProgressThrottle(worker.progress.emit, interval),
                                             cancel=token)
            finally:
                worker.refresh()  # the papers that came in (or went missing) show at once
            for result in report.results:  # the window counts and embeds them as any ingest's
                worker.ingest_result.emit(result)
            return report

        self.call(INGEST, work, on_report, on_failure)

    def annotate_answer(self, answer_id: str, in_place: bool, on_done: Callable[[list[AnnotatedPaper]], None]) -> None:
        """Write a past answer's quotes into its papers as highlights (copies unless ``in_place``)."""
        self.call(LOOKUP, lambda engine: engine.annotate_answer(answer_id, in_place=in_place), on_done)

    def answer_file_notices(self, answer: Answer, on_result: Callable[[list[str]], None]) -> None:
        """What to say about an answer's cited papers whose files are missing or were removed."""
        self.call(LOOKUP, lambda engine: engine.answer_file_notices(answer), on_result)

    def open_folder_events(self, on_change: Callable[[], None],
                           on_opened: Callable[[tuple[FolderEvents, list[str]]], None]) -> None:
        """The watched folders' live events (``on_change`` hears each burst, on the events' own thread) and
        the folders to follow, for :class:`ui.watch_follower.WatchFollower`."""
        self.call(LOOKUP, lambda engine: (engine.folder_events(on_change), _watched_paths(engine)), on_opened)

    def watched_folders(self, on_result: Callable[[tuple[list[WatchedFolder], list[MissingFile]]], None]) -> None:
        """The watched folders and the missing papers."""
        self.call(LOOKUP, lambda engine: (engine.watched_folders(), engine.missing_files()), on_result)

    def watched_folder_paths(self, on_result: Callable[[list[str]], None]) -> None:
        self.call(LOOKUP, _watched_paths, on_result)

    def watch_folder(self, folder: str, on_done: Callable[[object], None]) -> None:
        """Watch ``folder``; a refusal (a file, a link loop, inside a watched one) goes to :attr:`error`."""
        self.call(EDIT, lambda engine: engine.watch_folder(folder), on_done)

    def unwatch_folder(self, folder: str, on_done: Callable[[object], None]) -> None:
        self.call(EDIT, lambda engine: engine.unwatch_folder(folder), on_done)

    def import_zotero(self, folder: str, on_done: Callable[[ZoteroReport], None] | None = None) -> None:
        """Add the PDFs of a Zotero data folder with Zotero's metadata (read-only)."""
        self.call(ZOTERO, lambda engine: engine.import_zotero(folder), on_done)

    def check_claim(self, claim: str, on_result: Callable[[ClaimCheck], None],
                    on_failure: Callable[[], None] | None = None) -> None:
        """The passages that support or contradict ``claim``, each with its verdict and verbatim quote."""
        self.call(CHECK, lambda engine: engine.check(claim), on_result, on_failure)

    def _on_notice(self, message: str) -> None:
        """The long lane saved new settings on its own (ingest chose the multilingual embedder): the quick
        lane reads them from the file before its next job, then the window hears of both."""
        def announce(_: object) -> None:
            self.notice.emit(message)
            self.settings_changed.emit()

        self.call(SETTINGS, lambda engine: engine.reload_settings(), announce)

    def _announce_settings(self, settings: Any) -> None:
        """Settings were saved: the long lane adopts them, then the window hears of it."""
        self._adopt_settings(settings)
        self.settings_changed.emit()

    def _adopt_settings(self, settings: Any) -> None:
        """The long lane's engine takes settings saved on the quick lane before its next job (a
        question queued now uses them), without anyone touching it from another thread."""
        def adopt(engine: Engine) -> None:
            engine.settings = settings
        self.call(ADOPT, adopt)

    def shutdown(self) -> None:
        """Cancel ingestion, wait for the current job to stop, then close the engine."""
        if self._closed:
            return
        self._closed = True
        self._watch.stop()
        self.cancel()
        self.cancel_answer()
        self.cancel_embedding()
        for thread in (self._thread, self._quick_thread):
            thread.quit()  # jobs still queued are dropped; the engine stops at its next check
        for thread in (self._thread, self._quick_thread):
            thread.wait()
        self._engine.close()
        self._quick_engine.close()
        was_busy, was_ingesting, was_asking = self.busy, self.ingesting, self.asking
        self._pending.clear()  # the dropped jobs will never report back
        self._ingest_tokens.clear()
        self._ask_tokens.clear()
        self._embed_tokens.clear()
        self._callbacks.clear()
        self._emit_changes(was_busy, was_ingesting, was_asking)

    # --- bookkeeping on the UI thread ---------------------------------------------------------

    def _post(self, kind: str, call: Callable[[], None]) -> None:
        if self._closed:
            log.warning("Ignored a %s request after shutdown", kind)
            return
        was_busy, was_ingesting, was_asking = self.busy, self.ingesting, self.asking
        self._pending[kind] += 1
        self._emit_changes(was_busy, was_ingesting, was_asking)
        (self._submit_quick if kind in QUICK_KINDS else self._submit).emit(Job(kind, call))

    @Slot(str)
    def _on_finished(self, kind: str) -> None:
        if self._closed:  # a report queued before shutdown, which already settled the counts
            return
        was_busy, was_ingesting, was_asking = self.busy, self.ingesting, self.asking
        self._pending[kind] -= 1
        if kind == INGEST:
            self._ingest_tokens.pop(0)
        elif kind == ASK:
            self._ask_tokens.pop(0)
        elif kind == EMBED:
            self._embed_tokens.pop(0)
        self._emit_changes(was_busy, was_ingesting, was_asking)
        self.job_finished.emit(kind)

    @Slot(int, bool, object)
    def _on_settled(self, ticket: int, succeeded: bool, value: object) -> None:
        on_result, on_failure = self._callbacks.pop(ticket, (None, None))
        if succeeded and on_result is not None:
            on_result(value)
        elif not succeeded and on_failure is not None:
            on_failure()

    def _emit_changes(self, was_busy: bool, was_ingesting: bool, was_asking: bool | None = None) -> None:
        if self.ingesting != was_ingesting:
            self.ingesting_changed.emit(self.ingesting)
        if was_asking is not None and self.asking != was_asking:
            self.asking_changed.emit(self.asking)
        if self.busy != was_busy:
            self.busy_changed.emit(self.busy)

    @Slot(object)
    def _on_progress(self, progress: Progress) -> None:
        self.progress.emit(progress.stage, progress.done, progress.total, progress.label)


def _watched_paths(engine: Engine) -> list[str]:
    return [folder.path for folder in engine.watched_folders()]
