"""Starting Quire's desktop app: arguments, logging, the QApplication, one engine, the main window."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import platformdirs
from PySide6.QtCore import QSettings, QTimer, QUrl
from PySide6.QtWidgets import QApplication

import engine
from desktop.logging_setup import configure_logging
from desktop.platform_check import platform_problem
from desktop.self_test import run_self_test
from desktop.single_instance import HandoverError, InstanceServer, hand_over, server_name
from engine.config import APP_NAME, resolve_paths
from engine.errors import EngineError
from engine.links import SCHEME
from engine.process import prepare_process
from engine.service import Engine
from ui import errors
from ui.engine_client import EngineClient
from ui.main_window import MainWindow
from ui.theme import apply_theme


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="quire-desktop", description="Quire: an offline research assistant "
                                     "for your PDFs.")
    parser.add_argument("paths", nargs="*", metavar="PDF|URL",
                        help="PDF files or folders to add when the window opens, or quire://open links to open "
                             "at their page with the quote highlighted")
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


def split_links(arguments: Sequence[str]) -> tuple[list[str], list[str]]:
    """The ``quire://`` links among the command line's arguments, and the files and folders.

    The desktop entry's ``%u`` may give a file as a ``file://`` URL (a file manager's "Open With"); it
    is turned back into its path.
    """
    links: list[str] = []
    paths: list[str] = []
    for argument in arguments:
        scheme = argument.partition(":")[0].lower()
        if scheme == SCHEME:
            links.append(argument)
        elif scheme == "file" and QUrl(argument).isLocalFile():
            paths.append(QUrl(argument).toLocalFile())
        else:
            paths.append(argument)
    return links, paths


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
    links, paths = split_links(args.paths)
    instance = InstanceServer(server_name(home))
    try:  # one app per library: a running one opens the links and files instead
        if hand_over(instance.name, links, [str(Path(path).resolve()) for path in paths]):
            return 0
    except HandoverError as exc:
        print(exc, file=sys.stderr)
        return 1
    instance.listen()
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
        accept_handovers(instance, window)
        window.add_paths(paths)
        window.open_links(links)
        _close_on_ctrl_c(window)
        return app.exec()
    finally:
        instance.close()
        client.shutdown()


def accept_handovers(instance: InstanceServer, window: MainWindow) -> None:
    """What a later launch on the same library hands over opens here, the window brought to the front."""
    def open_handed(links: list[str], paths: list[str]) -> None:
        if window.isMinimized():
            window.showNormal()
        window.raise_()
        window.activateWindow()
        window.add_paths(paths)
        window.open_links(links)
    instance.received.connect(open_handed)


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
