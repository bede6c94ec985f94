"""A one-line progress bar on stderr; silent when stderr is not a terminal."""

from __future__ import annotations

import re
import shutil
import sys
import time
from typing import TextIO

from engine.progress import Progress

# C0 and C1 control characters (ESC starts ANSI sequences; CSI is U+009B) and DEL: a file name
# holding them could recolour, move the cursor or retitle the user's terminal.
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` with every control character except newline shown as an escape (``\\x1b``), never sent raw."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


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
        label = terminal_safe(files.label).replace("\n", " ")
        line = f"[{'#' * filled}{'-' * (bar_width - filled)}] {files.done}/{files.total}{eta} {label}{detail}"
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
        print(terminal_safe(text), file=stream or sys.stdout, flush=True)
