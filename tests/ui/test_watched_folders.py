"""Watched folders in the app: the window catches up at start and follows real file events while it runs
(through the engine client's long lane), and the Watched Folders dialog adds, refuses and removes folders."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from engine.service import Engine
from engine.watch import SyncReport
from ui.engine_client import EngineClient
from ui.main_window import MainWindow
from ui.watch_dialog import WatchDialog

pytestmark = pytest.mark.slow  # a window, two engines and real file events: tens of seconds on two cores

TIMEOUT_MS = 60_000
PAST = time.time() - 3600


def _paper(path: Path, word: str) -> Path:
    text_pdf(path, [f"A study of {word}.\n" + paper_text(word, 1)])
    os.utime(path, (PAST, PAST))
    return path


def test_the_window_catches_up_then_follows_file_events(qtbot: QtBot, tmp_path: Path, window_settings: QSettings,
                                                         shown_errors: list[str]) -> None:
    folder = tmp_path / "downloads"
    folder.mkdir()
    _paper(folder / "before.pdf", "ammonites")  # saved while Quire was closed
    with Engine(tmp_path / "home") as engine:
        engine.watch_folder(folder)
    client = EngineClient(Engine(tmp_path / "home"))
    window = MainWindow(client, window_settings, progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.show()
    reports: list[SyncReport] = []
    window.watch_follower.report_ready.connect(reports.append)
    try:
        qtbot.waitUntil(lambda: window.model.rowCount() == 1 and not client.busy, timeout=TIMEOUT_MS)
        (folder / "sub").mkdir()
        _paper(folder / "sub" / "while-open.pdf", "trilobites")  # saved while it runs: a real file event
        qtbot.waitUntil(lambda: window.model.rowCount() == 2 and not client.busy, timeout=TIMEOUT_MS)
        assert window.statusBar().currentMessage() == "Added 1 paper."  # counted as any ingest
        (folder / "before.pdf").unlink()
        qtbot.waitUntil(lambda: any(report.missing for report in reports), timeout=TIMEOUT_MS)
        assert window.model.rowCount() == 2  # kept, marked missing
    finally:
        window.close()
        client.shutdown()


def test_the_dialog_adds_refuses_and_removes_folders(qtbot: QtBot, client: EngineClient, tmp_path: Path,
                                                      window_settings: QSettings, shown_errors: list[str]) -> None:
    window = MainWindow(client, window_settings, progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    dialog = WatchDialog(client, window.watch_follower, window)
    qtbot.addWidget(dialog)
    folder = tmp_path / "papers"
    folder.mkdir()
    _paper(folder / "one.pdf", "brachiopods")
    dialog.add_folder(str(folder))
    qtbot.waitUntil(lambda: dialog.folders.count() == 1 and window.model.rowCount() == 1 and not client.busy,
                    timeout=TIMEOUT_MS)
    dialog.add_folder(str(folder / "one.pdf"))
    qtbot.waitUntil(lambda: bool(shown_errors), timeout=TIMEOUT_MS)
    assert "is a file, not a folder" in shown_errors.pop()
    dialog.folders.item(0).setSelected(True)
    dialog.remove_button.click()
    qtbot.waitUntil(lambda: dialog.folders.count() == 0, timeout=TIMEOUT_MS)
    assert window.model.rowCount() == 1  # its papers stay
    window.close()
