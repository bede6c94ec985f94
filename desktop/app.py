"""Starting Quire's desktop app: arguments, logging, the QApplication, one engine, the main window."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import platformdirs
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication

import engine
from desktop.logging_setup import configure_logging
from desktop.platform_check import platform_problem
from desktop.self_test import run_self_test
from engine.config import APP_NAME, resolve_paths
from engine.errors import EngineError
from engine.process import prepare_process
from engine.service import Engine
from ui import errors
from ui.engine_client import EngineClient
from ui.main_window import MainWindow
from ui.theme import apply_theme


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="quire-desktop", description="Quire: an offline research assistant "
                                     "for your PDFs.")
    parser.add_argument("paths", nargs="*", metavar="PDF", help="PDF files or folders to add when the window opens")
    parser.add_argument("--home", metavar="DIR", help="library folder (default: $QUIRE_HOME or your user data dir); "
                        "window settings and logs are kept there too")
    parser.add_argument("--self-test", action="store_true",
                        help="add the bundled demo papers to a temporary library, check that the window lists "
                             "them, and exit 0 on success or 1 on failure (runs without a display)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    return parser


def application() -> QApplication:
    """The process's QApplication, created once and named so QSettings and the desktop file find it."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0] if sys.argv else APP_NAME])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationVersion(engine.__version__)
    app.setDesktopFileName("quire")  # matches packaging/quire.desktop, so docks show the right icon
    return app


def window_settings(home: Path | None) -> QSettings:
    """Window geometry and UI choices: beside the library when a home was chosen, else per user."""
    if home is not None:
        return QSettings(str(home / "window.ini"), QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, APP_NAME, APP_NAME)


def main(argv: Sequence[str] | None = None) -> int:
    prepare_process()  # before anything loads llama.cpp, ONNX Runtime or the hub client
    args = build_parser().parse_args(argv)
    if args.self_test:
        # The self-test must run on CI machines and over SSH, where there is no display.
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        configure_logging(args.verbose)
        return run_self_test(application())

    problem = platform_problem()
    if problem:  # Qt would abort with SIGABRT and a message about plugins; say what to install instead
        print(problem, file=sys.stderr)
        return 1
    # A chosen home (--home or QUIRE_HOME) keeps everything together, so a second library or a
    # test run never touches the user's own settings and logs.
    explicit_home = bool(args.home or os.environ.get("QUIRE_HOME"))
    home = resolve_paths(args.home).home
    log_dir = home / "logs" if explicit_home else Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))
    configure_logging(args.verbose, log_dir)
    app = application()
    apply_theme(app)
    try:
        library = Engine(args.home)
    except EngineError as exc:
        errors.show_error(None, str(exc), wait=True)
        return 1
    client = EngineClient(library)
    try:
        window = MainWindow(client, window_settings(home if explicit_home else None))
        window.show()
        window.add_paths(args.paths)
        _close_on_ctrl_c(window)
        return app.exec()
    finally:
        client.shutdown()


def _close_on_ctrl_c(window: MainWindow) -> None:
    """Ctrl+C in the terminal closes the window properly (saving its geometry) instead of being ignored."""
    signal.signal(signal.SIGINT, lambda *_: window.close())
    # Python runs signal handlers only when it gets control; Qt's loop would otherwise keep it forever.
    wake = QTimer(window)
    wake.timeout.connect(lambda: None)
    wake.start(250)


def run() -> None:
    """The ``quire-desktop`` entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
