"""Live file events for the watched folders, through watchdog (inotify, FSEvents, ReadDirectoryChangesW).

The events only say *when* to look: each burst of them, once quiet for a moment, triggers one
catch-up pass (engine.watch.sync), which compares the folders with the catalog. So a missed or
doubled event costs nothing, and the pass that follows a start is the same as the one after an event.
Qt's QFileSystemWatcher would do for the app, but the engine never imports Qt and the headless
`quire library watch run` needs the same watcher.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import ObservedWatch

from engine.watch.rules import is_candidate

log = logging.getLogger(__name__)

QUIET_S = 0.5  # a burst of events (a copy of 1,000 files) becomes one pass, not 1,000
# Event kinds that change nothing on disk (inotify reports every open and read-only close).
_IGNORED = {"opened", "closed_no_write"}


class _Relevance(FileSystemEventHandler):
    def __init__(self, touched: Callable[[], None]) -> None:
        self._touched = touched

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in _IGNORED:
            return
        paths = [os.fsdecode(event.src_path), os.fsdecode(getattr(event, "dest_path", "") or "")]
        # A folder moved or deleted may hold PDFs; a file counts only when it can be a paper.
        if (event.is_directory and event.event_type in ("created", "deleted", "moved")) or any(
                path and is_candidate(os.path.basename(path)) for path in paths):
            self._touched()


class FolderEvents:
    """Calls ``on_change`` (on a thread of its own) once events in the followed folders have been quiet for
    ``quiet_s``, and again when :meth:`recheck_in` asks; while nothing happens its threads only sleep."""

    def __init__(self, on_change: Callable[[], None], quiet_s: float = QUIET_S) -> None:
        self._on_change = on_change
        self._quiet_s = quiet_s
        self._observer = Observer()
        self._observer.daemon = True
        self._watches: dict[str, ObservedWatch] = {}
        self._wake = threading.Condition()
        self._last_event: float | None = None
        self._due: float | None = None
        self._stopped = False
        self._timer = threading.Thread(target=self._run, name="quire-watch-events", daemon=True)
        self._started = False

    def follow(self, folders: Iterable[str]) -> list[str]:
        """Follow exactly ``folders`` (an unreadable one is left out and tried again at the next call);
        returns the folders followed now."""
        wanted = set(folders)
        for gone in set(self._watches) - wanted:
            self._observer.unschedule(self._watches.pop(gone))
        for folder in sorted(wanted - set(self._watches)):
            try:
                self._watches[folder] = self._observer.schedule(_Relevance(self._touched), folder, recursive=True)
            except OSError as exc:  # not there now (the pass reports it once); a later call retries
                log.info("Not following %s now: %s", folder, exc)
        if not self._started and self._watches:  # no threads at all while nothing is watched
            self._observer.start()
            self._timer.start()
            self._started = True
        return sorted(self._watches)

    def recheck_in(self, seconds: float) -> None:
        """Call ``on_change`` again after ``seconds`` even without events (files still being written)."""
        with self._wake:
            due = time.monotonic() + seconds
            self._due = due if self._due is None else min(self._due, due)
            self._wake.notify()

    def stop(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify()
        if self._started:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._timer.join(timeout=5)

    def _touched(self) -> None:
        with self._wake:
            self._last_event = time.monotonic()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._stopped:
                    now = time.monotonic()
                    deadlines = [when for when in (self._due, None if self._last_event is None
                                                   else self._last_event + self._quiet_s) if when is not None]
                    if deadlines and min(deadlines) <= now:
                        break
                    self._wake.wait(min(deadlines) - now if deadlines else None)
                if self._stopped:
                    return
                self._last_event = self._due = None
            try:
                self._on_change()
            except Exception:  # a failing consumer must not stop the events of the next change
                log.exception("Watched-folder change handler failed")
