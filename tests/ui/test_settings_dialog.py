"""The settings dialog edits the engine's Settings and the client persists them as TOML."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from engine.config import Settings, load_settings
from ui.engine_client import EngineClient
from ui.settings_dialog import SettingsDialog

TIMEOUT_MS = 30_000


def test_edited_settings_are_saved_and_reloaded(qtbot: QtBot, client: EngineClient, tmp_path: Path) -> None:
    loaded: list[Settings] = []
    client.load_settings(loaded.append)
    qtbot.waitUntil(lambda: bool(loaded), timeout=TIMEOUT_MS)

    dialog = SettingsDialog(loaded[0])
    qtbot.addWidget(dialog)
    dialog.model_edit.setText("  /models/qwen.gguf ")
    dialog.threads_box.setValue(6)
    dialog.gpu_layers_box.setValue(-1)
    dialog.top_n_box.setValue(12)
    dialog.feedback_box.setChecked(False)
    dialog.rewrite_box.setChecked(False)
    dialog.spelling_box.setChecked(False)
    edited = dialog.settings()
    saved: list[Settings] = []
    client.save_settings(edited, saved.append)
    qtbot.waitUntil(lambda: bool(saved), timeout=TIMEOUT_MS)

    on_disk = load_settings(client.home / "settings.toml")
    assert on_disk.generation.model == "/models/qwen.gguf"
    assert (on_disk.generation.threads, on_disk.generation.gpu_layers) == (6, -1)
    assert on_disk.retrieval.top_n == 12
    assert not on_disk.generation.feedback and not on_disk.retrieval.rewrite and not on_disk.retrieval.spelling
    assert on_disk.ingest == Settings().ingest  # untouched sections stay as they were

    again = SettingsDialog(on_disk)
    qtbot.addWidget(again)
    assert again.threads_box.value() == 6 and not again.feedback_box.isChecked()
    assert not again.spelling_box.isChecked()
    again._restore_defaults()
    assert again.settings().generation == Settings().generation
