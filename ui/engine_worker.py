"""The engine client's worker: lives on its own thread and is the only code that calls the engine."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal, Slot

from engine.errors import Cancelled, DocumentNotFoundError, EngineError
from engine.progress import CancelToken
from engine.service import Engine
from engine.types import IngestResult, Outcome
from ui.engine_tasks import ProgressThrottle, describe_failures

log = logging.getLogger(__name__)
_WORKER_NICENESS = 10  # added to the niceness the app runs at (19 at most): lower than the UI however started

# The kinds of job the worker runs (signals report which one finished).
INGEST = "ingest"
REFRESH = "refresh"
REMOVE = "remove"
ASK = "ask"
LOOKUP = "lookup"
SETTINGS = "settings"
EMBED = "embed"
DATASTORE = "datastore"
EDIT = "edit"
MODELS = "models"
CHECK = "check"
DOWNLOAD = "download"
ZOTERO = "zotero"
ADOPT = "adopt"  # the long lane's engine taking settings saved on the quick lane
POLL = "poll"  # asking whether another process changed the library: never counts as being busy

# The quick lane: reads and small edits of the catalog, settings and the model and datastore lists. They
# run on a worker of their own, with their own engine (and so their own SQLite connections), so they
# never wait behind a long job (an answer, an ingest, a download) on the other lane.
QUICK_KINDS = frozenset({REFRESH, REMOVE, LOOKUP, SETTINGS, EDIT, MODELS, POLL})

DOING = {INGEST: "adding papers", REFRESH: "reading the library", REMOVE: "removing a paper",
         ASK: "answering the question", LOOKUP: "opening a passage", SETTINGS: "saving the settings",
         EMBED: "preparing papers for meaning search", DATASTORE: "changing the datastores",
         EDIT: "saving a paper's details", MODELS: "reading the models", CHECK: "checking a claim",
         DOWNLOAD: "downloading", ZOTERO: "importing from Zotero", ADOPT: "applying the settings",
         POLL: "checking the library for changes"}

# The engine's message for a missing paper points to `quire library list`; in the app the list is on screen.
PAPER_GONE = ("That paper is no longer in the library: it was removed, perhaps by another program using the same "
              "library. The list now shows the papers as they are.")


@dataclass(frozen=True)
class Job:
    kind: str
    call: Callable[[], None]


class EngineWorker(QObject):
    """Lives on the worker thread and is the only code that calls the engine."""

    progress = Signal(object)  # Progress
    ingest_result = Signal(object)  # IngestResult
    documents = Signal(list)
    settled = Signal(int, bool, object)  # ticket, succeeded, value: the end of a :meth:`EngineClient.call`
    token = Signal(str)  # answer text as it streams
    stage = Signal(str)  # the answering stage now running
    failed = Signal(str)
    notice = Signal(str)  # something the engine changed that the user should hear of (a new embedder)
    cancelled = Signal(str)
    finished = Signal(str)  # the kind of job that just ended, whatever happened

    def __init__(self, engine: Engine, progress_interval: float, refresh_interval: float) -> None:
        super().__init__()
        self._engine = engine
        self._progress_interval = progress_interval
        self._refresh_interval = refresh_interval

    @Slot(object)
    def run(self, job: Job) -> None:
        try:
            job.call()
        except Cancelled as exc:
            self.cancelled.emit(str(exc))
        except DocumentNotFoundError as exc:
            log.info("%s failed: %s", job.kind, exc)
            self.failed.emit(PAPER_GONE if exc.doc_id else str(exc))
            self.refresh()  # the row the user acted on is gone: show the library as it is
        except EngineError as exc:
            log.info("%s failed: %s", job.kind, exc)
            self.failed.emit(str(exc))
        except Exception as exc:  # a bug must reach the user and the log, never vanish with the thread
            log.exception("Unexpected error in %s", job.kind)
            self.failed.emit(f"Unexpected error while {DOING.get(job.kind, job.kind)} ({type(exc).__name__}: {exc}). "
                             "Please report this, with the log file, so it can be fixed.")
        finally:
            self.finished.emit(job.kind)

    @Slot()
    def lower_priority(self) -> None:
        """Run engine work at a lower CPU priority than the UI thread.

        Embedding, reranking and generation keep every core busy; on a small machine the event
        loop would then wait for CPU time (stalls of several hundred ms were measured). On Linux a
        thread's nice value is its own and is inherited by the threads it starts, so torch's and
        llama.cpp's worker threads, created from here, get it too.
        """
        if sys.platform.startswith("linux"):
            try:
                thread = threading.get_native_id()
                started = os.getpriority(os.PRIO_PROCESS, thread)  # inherited from the UI thread
                os.setpriority(os.PRIO_PROCESS, thread, min(19, started + _WORKER_NICENESS))
            except OSError as exc:
                log.info("Could not lower the engine thread's priority: %s", exc)

    def refresh(self) -> None:
        self.documents.emit(self._engine.documents())

    def call(self, ticket: int, work: Callable[[Engine], object]) -> None:
        succeeded, value = False, None
        try:
            value = work(self._engine)
            succeeded = True
        finally:
            self.settled.emit(ticket, succeeded, value)

    def remove(self, doc_id: str) -> None:
        try:
            self._engine.remove(doc_id)
        finally:
            self.refresh()  # even a failed removal may mean the table is out of date

    def ingest(self, paths: list[str], cancel: CancelToken) -> None:
        throttle = ProgressThrottle(self.progress.emit, self._progress_interval)
        failures: list[IngestResult] = []
        last_refresh = float("-inf")  # the first stored paper shows at once
        try:
            for result in self._engine.add_documents(paths, progress=throttle, cancel=cancel):
                self.ingest_result.emit(result)
                if result.outcome == Outcome.FAILED:
                    failures.append(result)
                # Rows appear while a long batch runs, without re-reading the catalog per file.
                if result.outcome != Outcome.UNCHANGED and time.monotonic() - last_refresh >= self._refresh_interval:
                    self.refresh()
                    last_refresh = time.monotonic()
        except Cancelled:
            self.refresh()  # show what was kept before the cancel
            raise
        finally:
            if failures:
                self.failed.emit(describe_failures(failures))
        if self._engine.language_notice:  # ingest switched the library to the multilingual embedder
            self.notice.emit(self._engine.language_notice)
            self._engine.language_notice = ""
        self.refresh()
