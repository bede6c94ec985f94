"""A one-line progress bar on stderr; silent when stderr is not a terminal."""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO

from engine.progress import Progress


class ProgressBar:
    """Draws ``[####----] 12/29 file.pdf  page 3/15`` and redraws at most 10 times a second."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self._file = Progress("ingest", 0, 0)
        self._last_draw = 0.0
        self._started = time.monotonic()

    def __call__(self, progress: Progress) -> None:
        if progress.stage == "ingest":
            self._file = progress
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last_draw < 0.1 and progress.stage != "ingest":
            return
        self._last_draw = now
        self._draw(progress)

    def _draw(self, progress: Progress) -> None:
        width = shutil.get_terminal_size((80, 20)).columns
        files = self._file
        fraction = files.fraction
        if progress.stage == "parse" and files.total:
            fraction = (files.done + progress.fraction) / files.total
        bar_width = 24
        filled = int(bar_width * fraction)
        eta = ""
        elapsed = time.monotonic() - self._started
        if 0.02 < fraction < 1:
            eta = f" ETA {int(elapsed * (1 - fraction) / fraction)}s"
        detail = f" page {progress.done}/{progress.total}" if progress.stage == "parse" else ""
        line = f"[{'#' * filled}{'-' * (bar_width - filled)}] {files.done}/{files.total}{eta} {files.label}{detail}"
        self.stream.write("\r" + line[: width - 1].ljust(width - 1))
        self.stream.flush()

    def clear(self) -> None:
        if self.enabled:
            width = shutil.get_terminal_size((80, 20)).columns
            self.stream.write("\r" + " " * (width - 1) + "\r")
            self.stream.flush()

    def print(self, text: str, stream: TextIO | None = None) -> None:
        """Print a line above the bar without garbling it."""
        self.clear()
        print(text, file=stream or sys.stdout, flush=True)
