"""Logging for the desktop app: warnings to stderr, details to a rotating file, Qt's messages included.

Only desktop/ (and the CLI) configure handlers; engine and UI modules just call ``getLogger``.
"""

from __future__ import annotations

import logging
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler

_FORMAT = "%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"
_QT_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}

log = logging.getLogger("quire.desktop")


class _QuireHandler:
    """Marks the handlers installed here, so configuring twice replaces rather than duplicates them."""


def configure_logging(verbose: bool = False, log_dir: Path | None = None) -> Path | None:
    """Install the app's handlers; returns the log file in use, if one could be opened."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _QuireHandler)]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(logging.DEBUG if verbose else logging.INFO)

    if sys.stderr is not None:  # a windowed build on Windows has no stderr at all
        console = _ConsoleHandler(sys.stderr)
        console.setLevel(logging.DEBUG if verbose else logging.WARNING)
        console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(console)

    log_file = None
    if log_dir is not None:
        try:
            log_dir.mkdir(parents=True, exist_ok=True)
            log_file = log_dir / "quire.log"
            file_handler = _FileHandler(log_file, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
        except OSError as exc:
            log.warning("Cannot write a log file in %s (%s); logging to stderr only.", log_dir, exc)
            log_file = None
        else:
            file_handler.setFormatter(logging.Formatter(_FORMAT))
            root.addHandler(file_handler)

    qInstallMessageHandler(_qt_message)
    sys.excepthook = _log_uncaught
    return log_file


class _ConsoleHandler(logging.StreamHandler, _QuireHandler):  # type: ignore[type-arg]
    pass


class _FileHandler(RotatingFileHandler, _QuireHandler):
    pass


# Harmless notices from the offscreen platform (self-test, CI) that would read like problems.
_QT_NOISE = ("does not support propagateSizeHints",)


def _qt_message(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    level = _QT_LEVELS.get(kind, logging.WARNING)
    if any(noise in message for noise in _QT_NOISE):
        level = logging.DEBUG
    logging.getLogger("qt").log(level, "%s", message)


def _log_uncaught(kind: type[BaseException], value: BaseException, trace: TracebackType | None) -> None:
    # PySide reports exceptions raised in slots through sys.excepthook; without this they would
    # reach only a terminal the user never sees.
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, trace)
        return
    log.critical("Uncaught exception", exc_info=(kind, value, trace))
