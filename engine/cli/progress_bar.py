"""The CLI's progress lines on stderr (files, datastore stages, downloads); silent off a terminal."""

from __future__ import annotations

import re
import shutil
import sys
import time
from typing import TextIO

from engine.progress import Progress, human_size

# C0 and C1 control characters (ESC starts ANSI sequences; CSI is U+009B) and DEL: a file name
# holding them could recolour, move the cursor or retitle the user's terminal. Then the characters
# that change how the rest of a line reads without printing anything: the bidirectional overrides,
# embeddings, isolates and marks (U+202E shows "report\u202efdp.exe" as "reportexe.pdf") and the
# Unicode line and paragraph separators, which some terminals and pagers break the line at.
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def terminal_safe(text: str) -> str:
    """``text`` with every control character except newline shown as an escape (``\\x1b``, ``\\u202e``),
    never sent raw."""
    return _CONTROL.sub(lambda match: _escaped(match.group()), text)


def one_line(text: str) -> str:
    """``text`` for a field of a single output line (a file name, a title): as :func:`terminal_safe`, and a
    newline shown as ``\\x0a`` too, so a crafted name cannot start a line of its own that reads like a result."""
    return terminal_safe(text).replace("\n", "\\x0a")


def _escaped(character: str) -> str:
    code = ord(character)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def bar(fraction: float, width: int = 24) -> str:
    """``[#########---------------]``: ``fraction`` (0-1) of ``width`` cells filled."""
    filled = int(width * min(1.0, max(0.0, fraction)))
    return f"[{'#' * filled}{'-' * (width - filled)}]"


class TerminalLine:
    """One line on stderr, redrawn in place at most 10 times a second; silent when it is not a terminal.

    The three progress displays of the CLI (files, datastore stages, downloads) differ only in
    the line they draw.
    """

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self._last_draw = 0.0
        self._started = time.monotonic()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def due(self, force: bool = False) -> bool:
        """Whether to draw now: on a terminal, and ``force`` or a tenth of a second since the last draw."""
        if not self.enabled:
            return False
        now = time.monotonic()
        if not force and now - self._last_draw < 0.1:
            return False
        self._last_draw = now
        return True

    def draw(self, line: str) -> None:
        width = shutil.get_terminal_size((80, 20)).columns
        self.stream.write("\r" + terminal_safe(line).replace("\n", " ")[: width - 1].ljust(width - 1))
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


class ProgressBar(TerminalLine):
    """Draws ``[####----] 12/29 file.pdf  page 3/15`` while files are added."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        super().__init__(stream)
        self._file = Progress("ingest", 0, 0)

    def __call__(self, progress: Progress) -> None:
        if progress.stage == "ingest":
            self._file = progress
        if not self.due(force=progress.stage == "ingest"):
            return
        files = self._file
        fraction = files.fraction
        if progress.stage == "parse" and files.total:
            fraction = (files.done + progress.fraction) / files.total
        eta = f" ETA {int(self.elapsed * (1 - fraction) / fraction)}s" if 0.02 < fraction < 1 else ""
        detail = f" page {progress.done}/{progress.total}" if progress.stage == "parse" else ""
        self.draw(f"{bar(fraction)} {files.done}/{files.total}{eta} {files.label}{detail}")


class StageProgress(TerminalLine):
    """``import  [#####-----]  52%  3,100 records`` while a datastore is imported, embedded or packed."""

    def __call__(self, progress: Progress) -> None:
        if not self.due(force=progress.done >= progress.total):
            return
        percent = f"{100 * progress.fraction:3.0f}%" if progress.total else "    "
        self.draw(f"{progress.stage:<8}{bar(progress.fraction)} {percent}  {progress.label}")


class DownloadBar(TerminalLine):
    """``[#####-----] 1.2 GB / 4.7 GB  18.3 MB/s  ETA 3m12s  file.gguf`` while a model downloads."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        super().__init__(stream)
        self._first_done: int | None = None

    def __call__(self, progress: Progress) -> None:
        if progress.stage != "download" or not self.due(force=progress.done >= progress.total):
            return
        if self._first_done is None:
            self._first_done = progress.done  # a resumed download starts part-way
        rate = (progress.done - self._first_done) / max(self.elapsed, 1e-6)
        eta = ""
        if rate > 0 and progress.total > progress.done:
            seconds = int((progress.total - progress.done) / rate)
            eta = f"  ETA {seconds // 60}m{seconds % 60:02d}s"
        self.draw(f"{bar(progress.fraction)} {human_size(progress.done)} / {human_size(progress.total)}"
                  f"  {human_size(rate)}/s{eta}  {progress.label}")
