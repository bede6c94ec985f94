"""Parsing PDFs in worker processes while the caller stores what they send.

Two reasons to leave the caller's process: speed (PyMuPDF and the layout code hold the GIL, so
only a second process uses the second core while the first one writes to SQLite) and safety
(MuPDF runs C code on untrusted bytes: a file that hangs it, eats memory or crashes it costs a
worker, which is killed and replaced, never the application). Each worker parses one file at a
time and streams back its metadata, then each page's passages, then the page list, so a
1,000-page PDF never has to sit whole in memory on either side.

Workers come from a fork server (a clean, single-threaded process that imported the parser
once), so starting one takes milliseconds and is safe from a multi-threaded caller such as the
desktop app. Where processes cannot be started, the importer parses in its own process.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from engine.errors import IngestError, PasswordRequiredError
from engine.ingest.metadata import DocumentMeta
from engine.ingest.pipeline import IngestOptions, PdfParse
from engine.ingest.wordlist import english_counts
from engine.ingest.worker_clock import WorkerClock
from engine.progress import CancelToken, Progress, ProgressCallback, human_size, no_progress
from engine.types import Page, Passage

log = logging.getLogger(__name__)

# A worker that has buffered this many passages of a file the caller is not storing yet is not
# read from until the caller catches up (the pipe then makes it wait): memory stays bounded.
_LOOKAHEAD_PASSAGES = 4096
# Address space a worker may use; a PDF that needs more fails alone, with a clear reason.
DEFAULT_MEMORY_LIMIT = 4 * 2**30


# Loaded here, at import: the fork server imports this module once, so every parse worker it
# forks starts with the word list instead of reading it again (0.2 s of CPU per worker).
english_counts()


def default_worker_count() -> int:
    """Parse workers for one batch: ``QUIRE_PARSE_WORKERS`` or up to 2 (0 parses in-process)."""
    configured = os.environ.get("QUIRE_PARSE_WORKERS", "").strip()
    if configured.isdigit():
        return int(configured)
    return max(1, min(2, os.cpu_count() or 1))


# --- the worker side ------------------------------------------------------------------------


def _limit_memory(limit: int) -> None:
    try:
        import resource

        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or limit < hard:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):  # Windows, or a limit we may not lower: go on unbounded
        pass


def _serve(conn: Connection, memory_limit: int) -> None:
    """The worker's loop: parse each file sent, stream back what it yields, until told to stop."""
    _limit_memory(memory_limit)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):  # the caller went away (closed, or was killed)
            return
        if job is None:
            return
        path, options, digest = job
        try:
            _parse_one(conn, Path(path), options, digest)
        except (BrokenPipeError, EOFError, ConnectionResetError):
            return


def _parse_one(conn: Connection, path: Path, options: IngestOptions, digest: str) -> None:
    try:
        with PdfParse(path, options, content_hash=digest) as parse:
            conn.send(("meta", parse.meta, parse.page_count, parse.file_size))
            batch: list[Passage] = []

            def page_done(progress: Progress) -> None:
                conn.send(("page", progress.done, batch[:]))
                batch.clear()

            for passage in parse.passages(page_done):
                batch.append(passage)
            conn.send(("done", batch, parse.pages, parse.scanned_pages, parse.warnings))
    except IngestError as exc:
        conn.send(("error", isinstance(exc, PasswordRequiredError), exc.path, exc.reason))
    except MemoryError:
        conn.send(("error", False, str(path), "the PDF needs more memory than Quire allows one file "
                                              f"({DEFAULT_MEMORY_LIMIT // 2**30} GB); it is probably damaged"))
    except (BrokenPipeError, EOFError, ConnectionResetError):
        raise
    except Exception as exc:  # a parser bug costs this file, and the worker lives on
        conn.send(("error", False, str(path), f"unexpected error ({type(exc).__name__}: {exc}); "
                                              "please report this file"))


# --- the caller's side ----------------------------------------------------------------------


class ParseJob:
    """One file being parsed by a worker: its metadata, then its passages as they arrive."""

    def __init__(self, pool: ParsePool, worker: _Worker, path: Path) -> None:
        self._pool = pool
        self.worker: _Worker | None = worker
        self.path = path
        self.meta = DocumentMeta()
        self.page_count = 0
        self.file_size = 0
        self.pages: list[Page] = []
        self.scanned_pages: list[int] = []
        self.warnings: list[str] = []
        self.inbox: deque[tuple[Any, ...]] = deque()
        self.buffered = 0  # passages waiting in the inbox
        self.clock = WorkerClock(worker.process.pid)  # the worker's time on what it is reading now
        self.opened = False  # the worker has sent the metadata: it reads pages now
        self.finished = False

    def deliver(self, message: tuple[Any, ...]) -> None:
        self.inbox.append(message)
        self.clock.restart()
        self.opened = self.opened or message[0] == "meta"
        if message[0] in ("page", "done"):
            self.buffered += len(message[-1] if message[0] == "page" else message[1])
        if message[0] in ("done", "error"):
            self.finished = True
            self._pool.release(self)

    def fail(self, reason: str) -> None:
        self.deliver(("error", False, str(self.path), reason))

    def _next(self, cancel: CancelToken | None) -> tuple[Any, ...]:
        # Checked before every message, not only while waiting: a worker that ran ahead fills the
        # inbox, and a cancel must still stop the document at the next page.
        if cancel is not None:
            cancel.check()
        while not self.inbox:
            self._pool.pump(self, timeout=0.1)
            if cancel is not None:
                cancel.check()
        message = self.inbox.popleft()
        if message[0] == "error":
            _, locked, where, reason = message
            raise (PasswordRequiredError if locked else IngestError)(where, reason)
        return message

    def wait_meta(self, cancel: CancelToken | None = None) -> DocumentMeta:
        """Block until the worker has opened the file and read its metadata (or failed)."""
        _, self.meta, self.page_count, self.file_size = self._next(cancel)
        return self.meta

    def passages(self, progress: ProgressCallback = no_progress,
                 cancel: CancelToken | None = None) -> Iterator[Passage]:
        """Yield the passages in order as the worker sends them; ``pages`` etc. are set at the end."""
        while True:
            message = self._next(cancel)
            if message[0] == "page":
                _, number, batch = message
                self.buffered -= len(batch)
                yield from batch
                progress(Progress("parse", number, self.page_count, self.path.name))
                continue
            _, batch, pages, scanned_pages, warnings = message
            # Filled in place: the store holds these lists and reads them once the passages end.
            self.pages.extend(pages)
            self.scanned_pages.extend(scanned_pages)
            self.warnings.extend(warnings)
            self.buffered -= len(batch)
            yield from batch
            return


class _Worker:
    def __init__(self, context: Any, memory_limit: int) -> None:
        self.conn, child = context.Pipe(duplex=True)
        self.process = context.Process(target=_serve, args=(child, memory_limit), daemon=True,
                                       name="quire-parse")
        with _main_module_hidden():
            self.process.start()
        child.close()
        self.job: ParseJob | None = None

    def stop(self, kill: bool = False) -> None:
        if not kill:
            try:
                self.conn.send(None)
            except OSError:
                kill = True
        if kill and self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=0 if kill else 2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=2)
        self.conn.close()


class ParsePool:
    """Up to ``size`` worker processes; the caller keeps at most ``size`` jobs in flight."""

    def __init__(self, size: int, page_timeout: float = 60.0, memory_limit: int = DEFAULT_MEMORY_LIMIT) -> None:
        self.size = size
        self.page_timeout = page_timeout
        self.memory_limit = memory_limit
        self._context = _context()
        self._idle: list[_Worker] = []
        self._busy: list[_Worker] = []

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def free(self) -> int:
        return self.size - len(self._busy)

    def submit(self, path: Path, options: IngestOptions, digest: str) -> ParseJob:
        worker = self._idle.pop() if self._idle else _Worker(self._context, self.memory_limit)
        job = ParseJob(self, worker, path)
        worker.job = job
        self._busy.append(worker)
        try:
            worker.conn.send((str(path), options, digest))
        except OSError:  # the worker died while idle: replace it once
            self._discard(worker, kill=True)
            worker = _Worker(self._context, self.memory_limit)
            job.worker, worker.job = worker, job
            job.clock = WorkerClock(worker.process.pid)
            self._busy.append(worker)
            worker.conn.send((str(path), options, digest))
        return job

    def release(self, job: ParseJob) -> None:
        worker = job.worker
        job.worker = None
        if worker is not None and worker in self._busy:
            self._busy.remove(worker)
            worker.job = None
            self._idle.append(worker)

    def _discard(self, worker: _Worker, kill: bool) -> None:
        if worker in self._busy:
            self._busy.remove(worker)
        worker.stop(kill=kill)

    def pump(self, current: ParseJob, timeout: float) -> None:
        """Read whatever the workers have sent; fail a job whose worker died or ran too long on one step.

        A worker is timed by its own running time (:class:`WorkerClock`), never by how long this
        process was away: time it spent stopped with Ctrl-Z, hashing a huge file or storing a long
        document is not the worker's, and what the worker sent meanwhile is read before any job is judged.
        """
        self._read_ready([worker.conn for worker in self._busy if worker.job is not None and (
            worker.job is current or worker.job.buffered < _LOOKAHEAD_PASSAGES)], 0)
        listening = []
        for worker in list(self._busy):
            job = worker.job
            if job is None:
                continue
            if job is not current and job.buffered >= _LOOKAHEAD_PASSAGES:
                job.clock.restart()  # waiting on us, not stuck
                continue
            if job.clock.elapsed() > self.page_timeout:
                self._discard(worker, kill=True)
                job.worker = None
                job.fail(self._too_long(job))
                continue
            listening.append(worker.conn)
        if listening:
            self._read_ready(listening, timeout)

    def _too_long(self, job: ParseJob) -> str:
        limit = f"{self.page_timeout:.0f} s"
        if job.opened:
            return (f"reading one page took longer than {limit}, so Quire stopped; the PDF is probably "
                    "malformed: re-save it from a PDF viewer and add it again")
        try:
            size = f" ({human_size(job.path.stat().st_size)})"
        except OSError:
            size = ""
        # No page was reached: MuPDF was still looking for the file's structure, which for a file that
        # only starts like a PDF means scanning every byte of it.
        return (f"opening the file{size} took longer than {limit}, so Quire stopped: its start says PDF but "
                "MuPDF could not find the document's structure in it; it is probably damaged or not a PDF. "
                "Download it again or re-save it from a PDF viewer")

    def _read_ready(self, listening: list[Connection], timeout: float) -> None:
        """Deliver every message waiting on ``listening`` (waiting up to ``timeout`` for the first)."""
        if not listening:
            return
        for ready in wait(listening, timeout=timeout):
            worker = next((w for w in self._busy if w.conn is ready), None)
            if worker is None or worker.job is None:
                continue
            conn, job = worker.conn, worker.job
            assert job is not None
            try:
                while conn.poll():
                    job.deliver(conn.recv())
                    if job.finished:
                        break
            except (EOFError, OSError):
                self._discard(worker, kill=True)
                job.worker = None
                code = worker.process.exitcode
                job.fail(f"the PDF crashed the parser (exit code {code}); it is probably damaged: re-save it "
                         "from a PDF viewer or download it again")

    def close(self, kill: bool = False) -> None:
        """Stop every worker; ``kill`` for the ones still busy (cancel, errors)."""
        for worker in self._busy + self._idle:
            worker.stop(kill=kill or worker.job is not None)
        self._busy.clear()
        self._idle.clear()


@contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Start a worker without re-running the caller's main script in it.

    multiprocessing re-imports ``__main__`` in each new process so that functions defined there
    can be found; the workers need nothing from it, and a script without an
    ``if __name__ == "__main__"`` guard (or a test runner) would run again inside every worker.
    """
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved: dict[str, Any] = {name: main.__dict__[name] for name in ("__file__", "__spec__") if name in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods and not getattr(sys, "frozen", False):
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["engine.ingest.worker"])
        return context
    return multiprocessing.get_context("spawn")
