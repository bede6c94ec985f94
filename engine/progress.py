"""Progress reporting and cancellation for long operations, with no Qt in sight.

Long engine calls take a ``progress`` callback and a :class:`CancelToken`, report between
pages, files and batches, and stop at the next check once cancel is requested.
"""

from __future__ import annotations

import threading
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
