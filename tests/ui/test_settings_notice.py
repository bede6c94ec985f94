"""A settings file Quire could not read is set aside and defaults are used: the app tells the user so."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from engine.service import Engine
from ui.engine_client import EngineClient
from ui.main_window import MainWindow


def open_window(qtbot: QtBot, home: Path, window_settings: QSettings) -> EngineClient:
    client = EngineClient(Engine(home))
    window = MainWindow(client, window_settings, progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return client


def test_the_window_says_once_that_a_broken_settings_file_was_set_aside_and_where(
        qtbot: QtBot, tmp_path: Path, window_settings: QSettings, shown_errors: list[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.toml").write_bytes(b"\xff\xfe[\x00g\x00e\x00n\x00")  # UTF-16 cut short: not settings
    client = open_window(qtbot, home, window_settings)
    try:
        qtbot.waitUntil(lambda: len(shown_errors) == 1)
        assert shown_errors[0].startswith("Quire could not read its settings file, so it started with the default "
                                          "settings.")
        assert "kept as settings.toml.broken" in shown_errors[0]
        assert "choose your settings again in Settings" in shown_errors[0]
        shown_errors.clear()
        qtbot.wait(200)
        assert shown_errors == []  # once, not once per lane
    finally:
        client.shutdown()
    second = open_window(qtbot, home, window_settings)  # the next start has nothing to tell
    try:
        qtbot.wait(200)
        assert shown_errors == []
    finally:
        second.shutdown()
