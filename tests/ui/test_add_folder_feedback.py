"""File › Add Folder… says what it did: which folder, and what was added from it (or that it held no PDF)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from ui.engine_client import EngineClient
from ui.main_window import MainWindow


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (1024, 700)])
def test_add_folder_names_the_folder_and_what_came_of_it(qtbot: QtBot, window: MainWindow, client: EngineClient,
                                                         titled_pdf: Callable[[str], Path], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch, width: int,
                                                         height: int) -> None:
    window.resize(width, height)
    papers = tmp_path / "reading list"
    papers.mkdir()
    for title in ("Retrieval Systems That Cite", "Glaciers and Their Sliding Speed"):
        titled_pdf(title).rename(papers / f"{title}.pdf")
    empty = tmp_path / "nothing here"
    empty.mkdir()
    chosen = iter([str(papers), str(empty)])
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_args, **_kw: next(chosen))

    window.add_folder_action.trigger()
    assert window.statusBar().currentMessage() == "From “reading list”: looking for PDFs…"
    qtbot.waitUntil(lambda: "added 2 papers" in window.statusBar().currentMessage(), timeout=120_000)
    assert window.statusBar().currentMessage() == "From “reading list”: added 2 papers."
    qtbot.waitUntil(lambda: not client.ingesting, timeout=60_000)

    window.add_folder_action.trigger()
    qtbot.waitUntil(lambda: "no PDF" in window.statusBar().currentMessage(), timeout=60_000)
    assert window.statusBar().currentMessage() == "From “nothing here”: no PDF files found there."
