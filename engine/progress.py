"""Progress reporting and cancellation for long operations, with no Qt in sight.

Long engine calls take a ``progress`` callback and a :class:`CancelToken`, report between
pages, files and batches, and stop at the next check once cancel is requested.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from engine.errors import Cancelled


@dataclass(frozen=True)
class Progress:
    """A snapshot of a long operation: ``done`` of ``total`` units, plus a short label."""

    stage: str
    done: int
    total: int
    label: str = ""

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


ProgressCallback = Callable[[Progress], None]


def no_progress(_: Progress) -> None:
    """The default callback: report nothing."""


class CancelToken:
    """A thread-safe flag a caller sets to ask a long operation to stop."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` if cancellation was requested."""
        if self._event.is_set():
            raise Cancelled("Cancelled by the user; finished work was kept.")


def human_size(size: float) -> str:
    """``1536`` → ``"1.5 KB"``: sizes for people, in progress labels and listings (binary units)."""
    for unit in ("B", "KB", "MB", "GB"):
        if abs(size) < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def duration(seconds: float) -> str:
    """``45s``, ``3m12s``, ``1h05m``: time left, for people."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class Pace:
    """The rate and time left of one stage, measured from when the stage began (a new stage starts anew): what
    the CLI's progress lines and the app's status show alike."""

    def __init__(self) -> None:
        self._stage = ""
        self._started = time.monotonic()
        self._first = 0

    def note(self, stage: str, done: int) -> None:
        """Called with every report, drawn or not, so that a stage's rate is measured from its first one."""
        if stage != self._stage or done < self._first:
            self._stage, self._started, self._first = stage, time.monotonic(), done

    def counts(self, stage: str, done: int, total: int, unit: str = "", size: bool = False) -> str:
        """``1,200/3,529 passages  410/s  6s left`` (``size``: the counts are bytes, ``1.2 MB/3.9 MB  8.1 MB/s``)."""
        self.note(stage, done)
        seconds = time.monotonic() - self._started
        rate = (done - self._first) / seconds if seconds >= 0.5 else 0.0
        shown = (lambda n: human_size(n)) if size else (lambda n: f"{n:,.0f}")
        parts = [(f"{shown(done)}/{shown(total)}" if total else shown(done)) + (f" {unit}" if unit else "")]
        if rate > 0:
            parts.append(f"{human_size(rate)}/s" if size else f"{rate:,.1f}/s" if rate < 10 else f"{rate:,.0f}/s")
            if total > done:
                parts.append(f"{duration((total - done) / rate)} left")
        return "  ".join(parts)
