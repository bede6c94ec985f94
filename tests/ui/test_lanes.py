"""Two lanes into the engine: quick catalog work never waits behind a long job, and the dialogs a
second click could open twice open once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from engine.config import Settings, load_settings
from engine.service import Engine
from engine.types import Document
from ui.engine_client import EngineClient
from ui.engine_worker import DOWNLOAD
from ui.main_window import MainWindow
from ui.settings_dialog import SettingsDialog

TIMEOUT_MS = 30_000
AT_ONCE_MS = 5_000  # far below the long job, which only ends when the test lets it


def _hold_long_lane(client: EngineClient) -> threading.Event:
    """Occupy the long lane until the returned event is set; return once the job is running."""
    release = threading.Event()
    started = threading.Event()

    def hold(_engine: Engine) -> None:
        started.set()
        release.wait(60)

    client.call(DOWNLOAD, hold)
    assert started.wait(10), "the long lane never started the job"
    return release


@pytest.fixture
def long_job(client: EngineClient) -> Iterator[threading.Event]:
    """Occupies the long lane until the returned event is set (set again at teardown)."""
    release = _hold_long_lane(client)
    yield release
    release.set()


def _added(qtbot: QtBot, client: EngineClient, path: Path) -> Document:
    documents: list[list[Document]] = []
    client.documents_changed.connect(documents.append)
    client.add_paths([path])
    qtbot.waitUntil(lambda: not client.busy and bool(documents) and bool(documents[-1]), timeout=TIMEOUT_MS)
    return documents[-1][0]


def test_an_edit_saved_while_a_long_job_runs_lands_at_once(qtbot: QtBot, client: EngineClient,
                                                           titled_pdf: Callable[[str], Path]) -> None:
    document = _added(qtbot, client, titled_pdf("Lanes Keep Edits Moving"))  # before the lane is held
    release = _hold_long_lane(client)
    try:
        saved: list[Document] = []
        client.update_metadata(document.id, saved.append, title="A Corrected Title")
        qtbot.waitUntil(lambda: bool(saved), timeout=AT_ONCE_MS)
        assert saved[0].bib.title == "A Corrected Title"
        assert not release.is_set()  # it landed while the long job still held its lane

        listed: list[list[Document]] = []
        client.documents_changed.connect(listed.append)
        client.refresh()
        qtbot.waitUntil(lambda: bool(listed), timeout=AT_ONCE_MS)
        assert [doc.bib.title for doc in listed[-1]] == ["A Corrected Title"]
    finally:
        release.set()

    # The long lane's engine reads the same catalog: the edit is there too.
    seen: list[str] = []
    client.call(DOWNLOAD, lambda engine: engine.document(document.id).bib.title, seen.append)
    qtbot.waitUntil(lambda: bool(seen), timeout=TIMEOUT_MS)
    assert seen == ["A Corrected Title"]


def test_settings_load_and_save_while_a_long_job_runs_and_the_next_job_uses_them(
        qtbot: QtBot, client: EngineClient, long_job: threading.Event) -> None:
    loaded: list[Settings] = []
    client.load_settings(loaded.append)
    qtbot.waitUntil(lambda: bool(loaded), timeout=AT_ONCE_MS)

    edited = replace(loaded[0], retrieval=replace(loaded[0].retrieval, top_n=17))
    saved: list[Settings] = []
    client.save_settings(edited, saved.append)
    qtbot.waitUntil(lambda: bool(saved), timeout=AT_ONCE_MS)
    assert load_settings(client.home / "settings.toml").retrieval.top_n == 17

    long_job.set()
    used: list[int] = []
    client.call(DOWNLOAD, lambda engine: engine.settings.retrieval.top_n, used.append)
    qtbot.waitUntil(lambda: bool(used), timeout=TIMEOUT_MS)
    assert used == [17]


def test_two_settings_clicks_give_one_dialog(qtbot: QtBot, client: EngineClient, tmp_path: Path,
                                             shown_errors: list[str]) -> None:
    window = MainWindow(client, QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat),
                        progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.show()

    window.settings_action.trigger()
    window.settings_action.trigger()  # before the settings have arrived
    qtbot.waitUntil(lambda: window.dialogs.settings is not None and window.dialogs.settings.isVisible(),
                    timeout=AT_ONCE_MS)
    first = window.dialogs.settings
    window.settings_action.trigger()  # while it is open
    qtbot.wait(200)
    assert window.dialogs.settings is first
    assert len(window.findChildren(SettingsDialog)) == 1

    assert first is not None
    first.reject()
    qtbot.waitUntil(lambda: window.dialogs.settings is None, timeout=AT_ONCE_MS)
    window.settings_action.trigger()  # closed: a click opens a new one
    qtbot.waitUntil(lambda: window.dialogs.settings is not None, timeout=AT_ONCE_MS)
    assert window.dialogs.settings is not first


def test_settings_open_while_a_long_job_runs(qtbot: QtBot, client: EngineClient, tmp_path: Path,
                                             long_job: threading.Event, shown_errors: list[str]) -> None:
    window = MainWindow(client, QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat),
                        progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.settings_action.trigger()
    qtbot.waitUntil(lambda: window.dialogs.settings is not None, timeout=AT_ONCE_MS)
    assert not long_job.is_set()


def test_the_models_dialog_opens_once(qtbot: QtBot, client: EngineClient, tmp_path: Path,
                                      shown_errors: list[str]) -> None:
    window = MainWindow(client, QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat),
                        progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.show()
    window.models_action.trigger()
    first = window.dialogs.models
    window.models_action.trigger()
    assert first is not None and window.dialogs.models is first
    first.reject()
    qtbot.waitUntil(lambda: window.dialogs.models is None, timeout=AT_ONCE_MS)


def test_the_settings_dialog_checks_a_model_file_on_the_quick_lane(qtbot: QtBot, client: EngineClient,
                                                                   tmp_path: Path) -> None:
    dialog = SettingsDialog(Settings(), run_check=client.run_quick)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.model_edit.setText(str(tmp_path / "missing.gguf"))
    before = threading.active_count()
    dialog.accept()
    assert threading.active_count() == before  # no thread of the dialog's own
    qtbot.waitUntil(lambda: bool(dialog.problems), timeout=TIMEOUT_MS)
    assert dialog.problem_label.text().startswith("Model file: ")
