"""The CLI's progress on stderr (files, datastore stages, embedding, downloads): counts, rate and time left.

On a terminal one line is redrawn in place; off a terminal (a log, a pipe, a script) a plain line is printed
every ``PLAIN_EVERY`` seconds instead (``QUIRE_PROGRESS_EVERY`` changes it), so a long step is never silent
there either; a step done within ``QUIET_FOR`` seconds shows nothing; with ``--json`` (``quiet``) nothing is
shown at all, so stderr stays free for the messages a script reads.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from typing import TextIO

from engine.progress import Pace, Progress

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


PLAIN_EVERY = 10.0  # seconds between plain progress lines off a terminal
QUIET_FOR = 2.0  # a step done sooner than this needs no progress shown


def plain_every() -> float:
    """Seconds between plain lines in a log: ``QUIRE_PROGRESS_EVERY`` where set to a number (0 prints every
    update, for a log that must show each step), else ``PLAIN_EVERY``."""
    try:
        return max(0.0, float(os.environ.get("QUIRE_PROGRESS_EVERY", PLAIN_EVERY)))
    except ValueError:
        return PLAIN_EVERY


class TerminalLine:
    """Progress on stderr: one line redrawn in place at most 10 times a second on a terminal; off a terminal
    a plain line every ``PLAIN_EVERY`` seconds once a step has taken ``QUIET_FOR``; ``quiet`` (``--json``):
    nothing. The progress displays of the CLI differ only in the line they draw."""

    def __init__(self, stream: TextIO = sys.stderr, quiet: bool = False) -> None:
        self.stream = stream
        self.enabled = stream.isatty() and not quiet  # redrawn in place
        self.plain = not quiet and not self.enabled  # periodic lines
        self._last_draw = 0.0
        self._started = time.monotonic()
        self.every = plain_every()
        # The first plain line after QUIET_FOR, or sooner where lines are asked for more often.
        self._last_plain = self._started - self.every + min(QUIET_FOR, self.every)
        self.pace = Pace()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def due(self, force: bool = False) -> bool:
        """Whether to draw now: on a terminal, ``force`` or a tenth of a second since the last draw; off one,
        ``every`` seconds since the last line (the first after ``QUIET_FOR``)."""
        now = time.monotonic()
        if self.plain:
            if now - self._last_plain < self.every:
                return False
            self._last_plain = now
            return True
        if not self.enabled:
            return False
        if not force and now - self._last_draw < 0.1:
            return False
        self._last_draw = now
        return True

    def draw(self, line: str) -> None:
        if self.plain:
            print(terminal_safe(line).replace("\n", " "), file=self.stream, flush=True)
            return
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
    """Draws ``[####----] 12/29 files  0.8/s  21s left  file.pdf  page 3/15`` while files are added."""

    def __init__(self, stream: TextIO = sys.stderr, quiet: bool = False) -> None:
        super().__init__(stream, quiet)
        self._file = Progress("ingest", 0, 0)

    def __call__(self, progress: Progress) -> None:
        if progress.stage == "ingest":
            self._file = progress
            self.pace.note("files", progress.done)
        if not self.due(force=progress.stage == "ingest"):
            return
        files = self._file
        fraction = files.fraction
        if progress.stage == "parse" and files.total:
            fraction = (files.done + progress.fraction) / files.total
        detail = f"  page {progress.done}/{progress.total}" if progress.stage == "parse" else ""
        counts = self.pace.counts("files", files.done, files.total, "files")
        self.draw(f"{bar(fraction)} {counts}  {files.label}{detail}")


# What a stage's counts count: import reads the file's bytes; the rest count these.
_UNITS = {"embed": "passages", "bm25": "words", "index": "vectors"}


class StageProgress(TerminalLine):
    """``embed   [#####-----]  52%  3,100/5,961 passages  410/s  7s left`` while a datastore is imported,
    embedded or packed, or the library is embedded."""

    def __call__(self, progress: Progress) -> None:
        self.pace.note(progress.stage, progress.done)
        if not self.due(force=progress.done >= progress.total):
            return
        percent = f"{100 * progress.fraction:3.0f}%" if progress.total else "    "
        counts = self.pace.counts(progress.stage, progress.done, progress.total, _UNITS.get(progress.stage, ""),
                                  size=progress.stage == "import")
        label = f"  {progress.label}" if progress.label else ""
        self.draw(f"{progress.stage:<8}{bar(progress.fraction)} {percent}  {counts}{label}")


class DownloadBar(TerminalLine):
    """``[#####-----] 1.2 GB / 4.7 GB  18.3 MB/s  3m12s left  file.gguf`` while a model downloads."""

    def __init__(self, stream: TextIO = sys.stderr, quiet: bool = False) -> None:
        super().__init__(stream, quiet)

    def __call__(self, progress: Progress) -> None:
        if progress.stage == "download":
            self.pace.note("download", progress.done)  # a resumed download starts part-way
        if progress.stage != "download" or not self.due(force=progress.done >= progress.total):
            return
        counts = self.pace.counts("download", progress.done, progress.total, size=True)
        self.draw(f"{bar(progress.fraction)} {counts}  {progress.label}")
