"""Bringing the library in step with its watched folders: one catch-up pass, safe to repeat at any time.

A pass compares what is in each folder with what the catalog holds for it:

- a PDF the catalog does not know, or whose size or modification time changed, is ingested once it
  is complete (unchanged for ``settle_s`` seconds); the importer makes a changed file a new version of
  its paper (collections, corrections and Zotero link carried over) and a moved one (same bytes) a new
  path of the same paper;
- a file that failed to parse keeps its size and time, so it is not tried again until it changes;
- a known file no longer there is moved when its paper has another file on disk (the stale path is
  dropped), otherwise missing: the paper stays, and only ``prune`` removes it;
- a folder that cannot be read is reported once, and nothing of it is touched until it is back.

The pass holds no queue of its own: what is left to ingest is what is on disk and not in the
catalog, so a pass killed midway (even by SIGKILL) leaves the next one exactly the rest to do.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.store import FileRecord, Library
from engine.types import DocumentStatus, IngestResult, Outcome
from engine.watch.rules import walk_candidates
from engine.watch.state import ZOTERO_TRASH, WatchState

log = logging.getLogger(__name__)

# How long a file's size and modification time must stay put before it is taken for complete: a
# download or a copy in progress rewrites both every moment.
SETTLE_S = 3.0

AddFiles = Callable[[list[Path], ProgressCallback, CancelToken | None], Iterable[IngestResult]]


@dataclass
class SyncReport:
    """What one pass found and did."""

    results: list[IngestResult] = field(default_factory=list)  # every file handed to ingest, with its outcome
    moved: list[tuple[str, str]] = field(default_factory=list)  # (old path, the path the paper has now)
    missing: list[str] = field(default_factory=list)  # files newly gone (their papers kept, marked missing)
    returned: list[str] = field(default_factory=list)  # missing files that are back
    pruned: list[str] = field(default_factory=list)  # missing files whose papers were removed (prune)
    unavailable: list[tuple[str, str]] = field(default_factory=list)  # (folder, why): newly unreadable
    available_again: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)  # files still being written: the next pass takes them
    retry_after: float | None = None  # seconds until the first waiting file is due

    @property
    def changed(self) -> bool:
        """Whether the library changed (a window showing it should refresh)."""
        return bool(self.moved or self.missing or self.returned or self.pruned or any(
            result.outcome in (Outcome.ADDED, Outcome.UPDATED) for result in self.results))


@dataclass
class _Look:
    ready: list[Path] = field(default_factory=list)
    vanished: list[tuple[FileRecord, DocumentStatus]] = field(default_factory=list)
    present: set[str] = field(default_factory=set)


def sync_folders(library: Library, state: WatchState, add: AddFiles, *, settle_s: float = SETTLE_S,
                 prune: bool = False, progress: ProgressCallback = no_progress,
                 cancel: CancelToken | None = None, clock: Callable[[], float] = time.time) -> SyncReport:
    """One catch-up pass over every watched folder (see the module's description)."""
    report = SyncReport()
    look = _Look()
    unreadable: list[str] = []
    for folder in state.folders():
        reason = _unavailable(folder.path, folder.device)
        if reason:
            unreadable.append(folder.path)
            if state.set_unavailable(folder.path, reason):
                report.unavailable.append((folder.path, reason))
            continue
        if state.set_unavailable(folder.path, ""):
            report.available_again.append(folder.path)
        _look_at(folder.path, library, settle_s, clock(), look, report)
    back = [missing.path for missing in state.missing() if missing.path in look.present]
    state.forget_missing(back)
    report.returned.extend(back)
    if look.ready:
        report.results.extend(add(look.ready, progress, cancel))
    _settle_vanished(library, state, look.vanished, report)
    if prune:
        _prune(library, state, unreadable, report)
    return report


def _unavailable(folder: str, device: int) -> str:
    """Why a watched folder cannot be looked at now ('' when it can)."""
    try:
        os.listdir(folder)
        now_on = os.stat(folder).st_dev
    except FileNotFoundError:
        return "the folder is not there (a disk that is not mounted, or a network share that is down?)"
    except NotADirectoryError:
        return "it is a file now, not a folder"
    except PermissionError:
        return "Quire may not read the folder now; check its permissions"
    except OSError as exc:
        return f"the folder cannot be read ({exc.strerror})"
    if device and now_on != device:
        # An unmounted disk leaves its empty mount point behind, on the disk below: reading that as
        # "every paper was deleted" would mark the whole folder missing.
        return "the folder is on another disk than when it was added (a disk that is not mounted?)"
    return ""


def _look_at(folder: str, library: Library, settle_s: float, now: float, look: _Look, report: SyncReport) -> None:
    known = {record.path: (record, status) for record, status in library.files_under(folder)}
    for path in walk_candidates(folder):
        try:
            key = str(path.resolve(strict=True))
            found = path.stat()
        except (OSError, RuntimeError) as exc:  # gone meanwhile, or a link loop: nothing to ingest
            log.info("Skipping %s: %s", path, exc)
            continue
        look.present.add(key)
        record = known[key][0] if key in known else library.file_record(key)
        if record is not None and record.size == found.st_size and record.mtime == found.st_mtime:
            continue  # stored as it is, or failed as it is (tried once, not again until it changes)
        age = now - found.st_mtime
        if age < settle_s:
            report.waiting.append(str(path))
            due = settle_s - age + 0.1
            report.retry_after = due if report.retry_after is None else min(report.retry_after, due)
            continue
        look.ready.append(path)
    look.vanished.extend(entry for key, entry in known.items() if key not in look.present)


def _settle_vanished(library: Library, state: WatchState, vanished: list[tuple[FileRecord, DocumentStatus]],
                     report: SyncReport) -> None:
    for record, status in vanished:
        if status == DocumentStatus.FAILED:
            library.drop_file(record.path)  # a file that never became a paper: nothing to keep
            continue
        elsewhere = [path for path in library.file_paths(record.doc_id) if path != record.path and _exists(path)]
        if elsewhere:
            library.drop_file(record.path)
            state.forget_missing([record.path])
            report.moved.append((record.path, elsewhere[0]))
        elif state.mark_missing(record.path, record.doc_id):
            report.missing.append(record.path)


def _prune(library: Library, state: WatchState, unreadable: list[str], report: SyncReport) -> None:
    for missing in state.missing():
        if missing.kind == ZOTERO_TRASH:
            if missing.doc_id in {document.id for document in library.documents()}:
                library.remove_document(missing.doc_id)
            state.forget_missing([missing.path])
            report.pruned.append(missing.path)
            continue
        if _exists(missing.path) or any(missing.path.startswith(folder + os.sep) for folder in unreadable):
            continue  # back, or in a folder that cannot be looked at now: nothing is removed unseen
        library.drop_file(missing.path)  # the paper goes with its last file
        state.forget_missing([missing.path])
        report.pruned.append(missing.path)


def _exists(path: str) -> bool:
    return os.path.isfile(path)


def results_by_outcome(results: Iterable[IngestResult]) -> Iterator[tuple[Outcome, int]]:
    """How many results had each outcome (for a one-line summary)."""
    listed = list(results)
    for outcome in Outcome:
        count = sum(result.outcome == outcome for result in listed)
        if count:
            yield outcome, count
