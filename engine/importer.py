"""Adding PDF files to the library: discovery, de-duplication, parsing and storing.

Each file is handled on its own and committed on its own: one bad file never stops a batch,
and an interrupted batch resumes by skipping what is already stored.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import sqlite3
import stat
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from engine.errors import Cancelled, IngestError, StoreError
from engine.ingest.metadata import DocumentMeta
from engine.ingest.ocr import HOW_TO_ENABLE
from engine.ingest.pdf import file_hash, open_pdf, refuse_hollow
from engine.ingest.pipeline import IngestOptions, PdfParse
from engine.ingest.worker import ParseJob, ParsePool, default_worker_count
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.sqlite import DiskFullError
from engine.store import FileRecord, Library
from engine.types import Document, DocumentStatus, IngestResult, Outcome, Page, Passage, document_id

log = logging.getLogger(__name__)

_SNIFF_BYTES = 1024  # where a PDF's "%PDF" header must appear (as the parser checks it)
# A failed file is fingerprinted by its bytes only up to this size; a huge non-PDF is named by its path.
_FAILURE_HASH_LIMIT = 64 << 20


def discover_pdfs(paths: Iterable[str | Path], problems: list[IngestResult] | None = None) -> list[Path]:
    """Expand folders recursively into their PDFs; explicit files are kept whatever their name.

    A path that cannot be looked at (a symbolic-link loop, a folder Quire may not read) becomes a
    failed result in ``problems`` instead of stopping the batch; missing files are kept and
    reported as failures when they are planned, never dropped silently.
    """
    found: list[Path] = []
    troubles = problems if problems is not None else []
    for given in paths:
        path = Path(given).expanduser()
        try:
            is_folder = path.is_dir()
        except OSError as exc:  # a permission error on a parent folder; ELOOP is "not a folder"
            troubles.append(_unreadable(path, exc))
            continue
        if not is_folder:
            found.append(path)
            continue

        def skipped(error: OSError, top: Path = path) -> None:
            troubles.append(_unreadable(Path(error.filename or top), error, folder=True))

        for root, dirs, files in os.walk(path, onerror=skipped):
            dirs.sort()
            found.extend(Path(root) / name for name in sorted(files) if name.lower().endswith(".pdf"))
    unique: dict[str, Path] = {}
    for path in found:
        try:
            key = str(path.resolve())
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic-link loop (Python < 3.13)
            troubles.append(_unreadable(path, exc))
            continue
        unique.setdefault(key, path)
    return list(unique.values())


def _unreadable(path: Path, error: BaseException, folder: bool = False) -> IngestResult:
    """The failed result of a path that cannot even be looked at."""
    what = "folder" if folder else "path"
    if isinstance(error, RuntimeError) or getattr(error, "errno", None) == errno.ELOOP:
        reason = "it is a symbolic link that leads back to itself (a link loop); fix or delete the link"
    elif isinstance(error, PermissionError):
        reason = (f"Quire may not read this {what} ({error.strerror}); check its permissions"
                  + ("; the PDFs inside were not added" if folder else ""))
    else:
        reason = f"this {what} cannot be read ({getattr(error, 'strerror', None) or error})"
    return IngestResult(str(path), Outcome.FAILED, reason=reason)


def _failure_id(path: str, content: str) -> str:
    return document_id(content) if content else "x" + hashlib.sha1(path.encode("utf-8")).hexdigest()[:15]


@dataclass
class _Plan:
    """A file that must be parsed: what was learnt about it before parsing."""

    path: Path
    key: str
    digest: str
    record: FileRecord
    replaces: str | None
    updated: bool


@dataclass
class _Pending:
    """One file of the batch between its first look and its result, in batch order."""

    path: Path
    started: float
    result: IngestResult | None = None
    error: IngestError | None = None
    plan: _Plan | None = None
    job: ParseJob | None = None
    deferred: bool = False  # the same bytes are being parsed for an earlier file: look again then


class _ParseSource(Protocol):
    meta: DocumentMeta
    page_count: int
    file_size: int
    pages: list[Page]
    scanned_pages: list[int]
    warnings: list[str]

    def passages(self, progress: ProgressCallback = ..., cancel: CancelToken | None = ...) -> Iterator[Passage]: ...


class Importer:
    """Adds files to one library with the given options.

    Parsing runs in worker processes (see :mod:`engine.ingest.worker`): while this process
    stores one file, the workers already read the next ones. Results still come in batch order.
    """

    def __init__(self, library: Library, options: IngestOptions) -> None:
        self.library = library
        self.options = options
        self._pool: ParsePool | None = None

    def add(self, paths: Iterable[str | Path], progress: ProgressCallback = no_progress,
            cancel: CancelToken | None = None) -> Iterator[IngestResult]:
        """Ingest every PDF under ``paths``, yielding each file's result as soon as it is stored."""
        self.library.check_writable()  # a read-only library is refused once, before any parsing
        problems: list[IngestResult] = []
        files = discover_pdfs(paths, problems)
        yield from problems
        workers = self.options.parse_workers
        workers = min(default_worker_count() if workers is None else workers, len(files))
        self._pool = ParsePool(workers, self.options.page_timeout) if workers > 0 else None
        clean = False
        try:
            yield from self._add_all(files, progress, cancel)
            clean = True
        finally:
            if self._pool is not None:
                self._pool.close(kill=not clean)  # cancelled or abandoned: stop parsing at once
                self._pool = None

    def _add_all(self, files: list[Path], progress: ProgressCallback,
                 cancel: CancelToken | None) -> Iterator[IngestResult]:
        pending: deque[_Pending] = deque()
        in_flight: set[str] = set()  # hashes being parsed
        index = 0
        while index < len(files) or pending:
            # Look ahead while a worker is free, so parsing overlaps storing.
            while index < len(files) and (not pending or self._can_look_ahead(len(pending))):
                if cancel is not None:
                    cancel.check()
                path = files[index]
                progress(Progress("ingest", index, len(files), path.name))
                pending.append(self._first_look(path, in_flight))
                index += 1
            item = pending.popleft()
            result = self._finish(item, progress, cancel)
            if item.plan is not None:
                in_flight.discard(item.plan.digest)
            yield _with_time(result, time.perf_counter() - item.started)
        progress(Progress("ingest", len(files), len(files), "done"))

    def _can_look_ahead(self, pending: int) -> bool:
        return self._pool is not None and self._pool.free > 0 and pending < 4 * self._pool.size

    def _first_look(self, path: Path, in_flight: set[str]) -> _Pending:
        """Decide what a file needs; start parsing it in a worker when it is new or changed."""
        item = _Pending(path, time.perf_counter())
        try:
            planned = self._plan(path)
        except IngestError as exc:
            item.error = exc
            return item
        except Exception as exc:
            log.exception("Unexpected error looking at %s", path)
            item.error = IngestError(str(path), f"unexpected error ({type(exc).__name__}: {exc}); "
                                                "please report this file")
            return item
        if isinstance(planned, IngestResult):
            item.result = planned
            return item
        if planned.digest in in_flight:
            item.deferred = True
            return item
        item.plan = planned
        in_flight.add(planned.digest)
        if self._pool is not None:
            try:
                item.job = self._pool.submit(path, self.options, planned.digest)
            except OSError as exc:  # no processes to be had (limits, a frozen build): parse here
                log.warning("Parse workers unavailable (%s); parsing in this process", exc)
                self._pool.close(kill=True)
                self._pool = None
        return item

    def _finish(self, item: _Pending, progress: ProgressCallback, cancel: CancelToken | None) -> IngestResult:
        try:
            if item.error is not None:
                raise item.error
            if item.result is not None:
                return item.result
            if item.deferred:
                planned = self._plan(item.path)  # the earlier copy is stored now (or failed)
                if isinstance(planned, IngestResult):
                    return planned
                item.plan = planned
            assert item.plan is not None
            return self._parse_and_store(item.plan, item.job, progress, cancel)
        except Cancelled:
            raise
        except IngestError as exc:
            return self._record_failure(item.path, exc.reason)
        except DiskFullError:
            raise  # already says where the disk is full and what to do
        except sqlite3.Error as exc:
            # The library cannot be written (a full disk, a file size limit, a failing drive):
            # nothing after this file could be stored either, so the batch stops here, cleanly.
            raise StoreError(
                f"Quire could not write to the library at {self.library.path} ({exc}); the disk may be full. "
                "Free some space and run the same command again: everything stored before is kept and "
                "the rest resumes.") from None
        except Exception as exc:  # a parser bug must cost one file, never the batch
            log.exception("Unexpected error ingesting %s", item.path)
            return self._record_failure(item.path, f"unexpected error ({type(exc).__name__}: {exc}); "
                                                   "please report this file")

    def _plan(self, path: Path) -> IngestResult | _Plan:
        """What a file needs: nothing (a result), or parsing (a plan)."""
        key = str(path.resolve())
        if not _storable(key):
            raise IngestError(str(path), "the file name is not valid UTF-8 (it was made on a system with another "
                                         "encoding); rename the file and add it again")
        found = _regular_file_stat(path)
        known = self.library.file_record(key)
        if known and known.size == found.st_size and known.mtime == found.st_mtime:
            document = self.library.document(known.doc_id)
            if document.status != DocumentStatus.FAILED:
                return IngestResult(str(path), Outcome.UNCHANGED, document.id, document.bib.title,
                                    document.page_count, document.passage_count)
        _refuse_non_pdf(path, found.st_size)  # a glance at the first KiB before hashing every byte
        refuse_hollow(path, found)
        digest = file_hash(path)
        record = FileRecord(key, document_id(digest), found.st_size, found.st_mtime)
        existing = self.library.find_by_hash(digest)
        if existing is not None and existing.status != DocumentStatus.FAILED:
            # The same bytes under another name (or touched): one document, one more path. If this path
            # held another document before, that version is dropped unless another file still holds it.
            replaced = known.doc_id if known and known.doc_id != existing.id else None
            updated = replaced is not None and not self._is_failure(replaced)
            self.library.add_file(FileRecord(key, existing.id, found.st_size, found.st_mtime), replaces=replaced)
            note = "" if existing.path == key else f"same file as {existing.path}"
            return IngestResult(str(path), Outcome.UPDATED if updated else Outcome.UNCHANGED, existing.id,
                                existing.bib.title, existing.page_count, existing.passage_count, note)
        replaces = known.doc_id if known and known.doc_id != record.doc_id else None
        updated = replaces is not None and not self._is_failure(replaces)
        return _Plan(path, key, digest, record, replaces, updated)

    def _is_failure(self, doc_id: str) -> bool:
        try:
            return self.library.document(doc_id).status == DocumentStatus.FAILED
        except Exception:
            return True

    def _parse_and_store(self, plan: _Plan, job: ParseJob | None, progress: ProgressCallback,
                         cancel: CancelToken | None) -> IngestResult:
        if job is not None:
            job.wait_meta(cancel)
            stored, warnings = self._store(plan, job, progress, cancel)
        else:
            with PdfParse(plan.path, self.options, content_hash=plan.digest) as parse:
                stored, warnings = self._store(plan, parse, progress, cancel)
        outcome = Outcome.UPDATED if plan.updated else Outcome.ADDED
        return IngestResult(str(plan.path), outcome, stored.id, stored.bib.title, stored.page_count,
                            stored.passage_count, "; ".join(warnings))

    def _store(self, plan: _Plan, parse: _ParseSource, progress: ProgressCallback,
               cancel: CancelToken | None) -> tuple[Document, list[str]]:
        meta = parse.meta
        draft = Document(id=plan.record.doc_id, content_hash=plan.digest, path=plan.key, bib=meta.bib,
                         abstract=meta.abstract, file_size=parse.file_size)
        warnings: list[str] = []

        def final_status() -> tuple[DocumentStatus, str]:
            # Called inside the write transaction once every page has been read.
            if _file_changed(plan.path, plan.record):
                # Truncated, rewritten or still being copied while it was read: what was parsed is
                # not the file that is there now. Raising here rolls the whole document back.
                raise IngestError(str(plan.path), "the file changed while Quire was reading it (it may still "
                                                  "be downloading or copying); add it again once it is complete")
            warnings.extend(parse.warnings)
            if parse.scanned_pages:
                where = f"pages {_page_list(parse.scanned_pages)} of {parse.page_count}"
                note = (f"{where} have no text layer and OCR is switched off; switch it on in the settings "
                        "([ingest] ocr = true) and add the file again"
                        if not self.options.ocr else f"{where} have no text layer; {HOW_TO_ENABLE}")
                warnings.append(note)
                return DocumentStatus.SCANNED, note
            return DocumentStatus.INDEXED, ""

        stored = self.library.write_document(draft, parse.passages(progress, cancel), parse.pages,
                                             plan.record, plan.replaces, final_status)
        if stored.passage_count == 0 and not parse.scanned_pages:
            warnings.append("no text found in this PDF (it holds only images or drawings)")
        return stored, warnings

    def _record_failure(self, path: Path, reason: str) -> IngestResult:
        key = str(path.resolve())
        if not _storable(key):  # SQLite cannot hold the name: report the failure without a catalog entry
            return IngestResult(str(path), Outcome.FAILED, reason=reason)
        try:
            found = path.stat()
            size, mtime = found.st_size, found.st_mtime
            # Never a second read of a huge file, nor a first one of a pipe or device (it would block).
            readable = stat.S_ISREG(found.st_mode) and 0 < size <= _FAILURE_HASH_LIMIT
            digest = file_hash(path) if readable else ""
        except (OSError, IngestError):
            size, mtime, digest = 0, 0.0, ""
        doc_id = _failure_id(key, digest)
        try:
            self.library.write_failure(
                Document(id=doc_id, content_hash=digest, path=key, status=DocumentStatus.FAILED, error=reason,
                         file_size=size),
                FileRecord(key, doc_id, size, mtime))
        except Exception:  # remembering a failure must not turn into a second failure
            log.exception("Could not record the failure of %s", path)
        return IngestResult(str(path), Outcome.FAILED, doc_id, reason=reason)


def _regular_file_stat(path: Path) -> os.stat_result:
    """The file's stat, or an :class:`IngestError` saying why it cannot be read as a document.

    Only regular files are read: a named pipe or a device (or a link to one) called ``x.pdf``
    would block the batch forever on its first read.
    """
    where = str(path)
    try:
        found = path.stat()
    except FileNotFoundError:
        raise IngestError(where, "file not found; it may have been moved or deleted") from None
    except OSError as exc:
        raise IngestError(where, _unreadable(path, exc).reason) from None
    if not stat.S_ISREG(found.st_mode):
        kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(found.st_mode) else
                "a device" if stat.S_ISCHR(found.st_mode) or stat.S_ISBLK(found.st_mode) else
                "a socket" if stat.S_ISSOCK(found.st_mode) else "not a regular file")
        raise IngestError(where, f"this is {kind}, not a PDF file; only regular files can be added")
    return found


def _refuse_non_pdf(path: Path, size: int) -> None:
    """Raise the parser's own "not a PDF" / "empty" error from the file's first KiB, before any hashing.

    ``open_pdf`` reads only the head and the tail before it refuses such a file, so it is called
    here only when the head already shows the file is no PDF: real PDFs are parsed in a worker.
    """
    try:
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError as exc:
        raise IngestError(str(path), f"cannot read the file ({exc.strerror}); check its permissions") from None
    if size and b"%PDF" in head:
        return
    open_pdf(path).close()  # raises the precise reason; returns only if the file changed meanwhile


def _file_changed(path: Path, record: FileRecord) -> bool:
    """Whether the file no longer has the size and modification time it had when it was planned."""
    try:
        now = path.stat()
    except OSError:
        return True
    return now.st_size != record.size or now.st_mtime != record.mtime


def _storable(path: str) -> bool:
    # Undecodable bytes in a file name arrive as lone surrogates, which SQLite (UTF-8) rejects.
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _page_list(pages: list[int], limit: int = 8) -> str:
    shown = ", ".join(str(p) for p in pages[:limit])
    return shown + (f" and {len(pages) - limit} more" if len(pages) > limit else "")


def _with_time(result: IngestResult, seconds: float) -> IngestResult:
    return replace(result, seconds=round(seconds, 3))
