"""Following the watched folders in the foreground (`quire library watch run`, a server, a benchmark)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from engine.progress import CancelToken
from engine.watch.events import FolderEvents
from engine.watch.sync import SyncReport

# Even with live events, a full pass now and then: a network share may deliver no events at all.
RESCAN_EVERY_S = 300.0


def follow(sync_once: Callable[[], SyncReport], folders: Callable[[], list[str]], stop: CancelToken,
           on_report: Callable[[SyncReport], None], rescan_every_s: float = RESCAN_EVERY_S) -> None:
    """Catch up, then pass again after every burst of events, until ``stop`` is set.

    Every pass runs on the calling thread (the engine is only used from there); the event threads
    only wake it.
    """
    wake = threading.Event()
    events = FolderEvents(wake.set)
    try:
        events.follow(folders())
        while not stop.cancelled:
            report = sync_once()
            on_report(report)
            if report.retry_after is not None:
                events.recheck_in(report.retry_after)
            events.follow(folders())  # a folder added meanwhile, or one back after being unavailable
            # Short waits, so a stop request is seen within a second even with no events.
            waited = 0.0
            while not stop.cancelled and not wake.wait(1.0):
                waited += 1.0
                if waited >= rescan_every_s:
                    break
            wake.clear()
    finally:
        events.stop()
