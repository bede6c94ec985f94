"""How long a parse worker has been working on its current step, counting only time it ran.

The page time limit is there to stop a worker that MuPDF keeps busy for ever. Timing it with the
caller's wall clock also counts time nobody worked: Ctrl-Z stops the whole process group, and
after ``fg`` the stopped minutes looked like one page taking them. The worker's own heartbeat
is its processor time, which the kernel keeps for it: it does not advance while the worker is
stopped, blocked on a full pipe or waiting for the caller. A heartbeat written by a thread inside
the worker would not do, because PyMuPDF holds the GIL while it parses: such a thread is silent
exactly when a page hangs.

A step is credited ``min(wall time, processor time)`` between two looks, so a worker with several
busy threads (OCR) is never timed faster than the clock on the wall. One exception: a worker found
stopped on its own while the caller keeps looking (a debugger, a frozen cgroup; the tests' model of
a hang) is timed by the wall clock, since it will not go on by itself; a whole process group
stopped by Ctrl-Z is not, because the caller was stopped too and its look comes after a gap.
Where the system does not publish a process's processor time (no ``/proc``), the wall clock is
used, but a gap between two looks longer than ``ABSENCE`` is the caller's own absence (stopped, or
busy storing) and counts only up to that.
"""

from __future__ import annotations

import os
import time

# A gap between two looks longer than this is the caller away, not the worker busy (a caller that
# listens looks every 0.1 s).
ABSENCE = 1.0

try:
    _CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
except (AttributeError, ValueError, OSError):  # Windows
    _CLOCK_TICKS = 0


def processor_seconds(pid: int) -> tuple[float, bool] | None:
    """User plus system time process ``pid`` has used and whether it is stopped now, or None where
    the system does not say."""
    if not _CLOCK_TICKS:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            # The command name (field 2) may hold spaces and parentheses; the fields after its last ")"
            # start at field 3 (the state), so utime (14) and stime (15) are the 12th and 13th of them.
            fields = handle.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS, fields[0] in (b"T", b"t")
    except (OSError, IndexError, ValueError):
        return None


class WorkerClock:
    """Seconds one worker has run since it last sent something (see the module's docstring)."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        self.running = 0.0
        self._wall = time.monotonic()
        self._processor = self._read()[0]

    def restart(self) -> None:
        """The worker was heard from: its step starts now."""
        self.running = 0.0
        self._look()

    def elapsed(self) -> float:
        """Seconds the worker has run on its current step, updated by looking at it now."""
        wall_step, processor_step, stopped_alone = self._look()
        if processor_step is None:
            self.running += min(wall_step, ABSENCE)
        elif stopped_alone and wall_step <= ABSENCE:
            self.running += wall_step
        else:
            self.running += min(wall_step, processor_step)
        return self.running

    def _read(self) -> tuple[float | None, bool]:
        found = processor_seconds(self.pid) if self.pid is not None else None
        return (None, False) if found is None else found

    def _look(self) -> tuple[float, float | None, bool]:
        wall = time.monotonic()
        processor, stopped = self._read()
        wall_step = max(0.0, wall - self._wall)
        processor_step = None if processor is None or self._processor is None else max(0.0, processor - self._processor)
        self._wall, self._processor = wall, processor
        return wall_step, processor_step, stopped
