"""The app following its watched folders while it runs: file events wake a catch-up pass on the long lane.

The events come from the engine (watchdog, on threads of their own) and only say "look again"; each
pass runs through the engine client like an ingest, so the window stays responsive, its progress
reads "n of N" and Cancel stops it (finished files are kept; the next pass takes the rest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal, Slot

from ui.engine_tasks import describe_pass

if TYPE_CHECKING:
    from ui.engine_client import EngineClient

# The engine's values (its folder events, each pass's SyncReport) reach this module only through the client.
FolderEvents = Any
SyncReport = Any


class WatchFollower(QObject):
    """Catches up at start, then after every burst of file events in the watched folders."""

    notice = Signal(str)  # one line for the status bar: what the last pass did
    report_ready = Signal(object)  # the SyncReport of each pass
    _changed = Signal()  # emitted on the events' thread; delivered on this object's (the UI) thread

    def __init__(self, client: EngineClient, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._client = client
        self._events: FolderEvents | None = None
        self._syncing = False
        self._again = False
        self._stopped = False
        self._changed.connect(self.sync)

    def start(self) -> None:
        """Open the events (on the quick lane, through the engine), follow the folders, catch up."""
        self._client.open_folder_events(self._changed.emit, self._on_events)

    def folders_changed(self) -> None:
        """The list of folders was edited: follow the new list, then catch up with it."""
        self._client.watched_folder_paths(self._on_folders)

    @Slot()
    def sync(self, prune: bool = False) -> None:
        """One pass now, or right after the one running (events during a pass are not lost)."""
        if self._stopped:
            return
        if self._syncing:
            self._again = True
            return
        self._syncing = True
        self._client.sync_watched(self._on_report, prune=prune, on_failure=self._on_failure)

    def stop(self) -> None:
        self._stopped = True
        if self._events is not None:
            self._events.stop()
            self._events = None

    def _on_events(self, opened: tuple[FolderEvents, list[str]]) -> None:
        events, folders = opened
        if self._stopped:
            events.stop()
            return
        self._events = events
        self._on_folders(folders)

    def _on_folders(self, folders: list[str]) -> None:
        if self._events is not None and not self._stopped:
            self._events.follow(folders)
        if folders:
            self.sync()

    def _on_failure(self) -> None:
        self._syncing = False  # the error went to the error dialog; the next event tries again

    def _on_report(self, report: SyncReport) -> None:
        self._syncing = False
        if report.retry_after is not None and self._events is not None:
            self._events.recheck_in(report.retry_after)
        self.report_ready.emit(report)
        line = describe_pass(report)
        if line:
            self.notice.emit(line)
        if self._again:
            self._again = False
            self.sync()
