"""Fixtures for the desktop UI: a real engine in tmp_path behind a real EngineClient, offscreen.

Nothing here fakes the engine. Only the error dialog is replaced (by ``shown_errors``), so a test
never blocks on a modal box and every message that would have been shown is checked.
"""

from __future__ import annotations

import os

# Before anything creates the QApplication: tests must run on machines without a display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable, Iterator
from pathlib import Path

import pymupdf
import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from engine.service import Engine
from ui import errors
from ui.engine_client import EngineClient
from ui.main_window import MainWindow
from ui.pdf_viewer import PdfViewer

CORPUS = Path(os.environ.get("QUIRE_TEST_CORPUS", Path(__file__).resolve().parents[3] / "shared" / "corpus"))


@pytest.fixture(scope="session")
def corpus_papers() -> Path:
    folder = CORPUS / "papers"
    if not folder.is_dir():
        pytest.skip(f"the shared corpus is not here ({folder}); set QUIRE_TEST_CORPUS")
    return folder


@pytest.fixture
def client(tmp_path: Path) -> Iterator[EngineClient]:
    """An EngineClient on a fresh library in tmp_path (never the user's)."""
    engine_client = EngineClient(Engine(tmp_path / "home"))
    yield engine_client
    engine_client.shutdown()


@pytest.fixture
def window_settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def shown_errors(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Messages that reached the error dialog. A test that expects some checks them and clears the list;
    anything left at the end is an unexpected error and fails the test."""
    shown: list[str] = []
    monkeypatch.setattr(errors, "show_error", lambda parent, message, **_: shown.append(message))
    yield shown
    assert not shown, f"unexpected error dialog(s): {shown}"


class Confirmations:
    """Stands in for the user at a confirmation box: records each question and answers ``answer``."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.answer = True

    def __call__(self, parent: object, question: str, details: str = "", **_: object) -> bool:
        self.asked.append(question)
        return self.answer


@pytest.fixture(autouse=True)
def confirmations(monkeypatch: pytest.MonkeyPatch) -> Confirmations:
    """Confirmation boxes are modal; every UI test answers them through this (Remove, unless told otherwise)."""
    answering = Confirmations()
    monkeypatch.setattr(errors, "confirm", answering)
    return answering


@pytest.fixture
def window(qtbot: QtBot, client: EngineClient, window_settings: QSettings, shown_errors: list[str]) -> MainWindow:
    main_window = MainWindow(client, window_settings, progress_delay_ms=0)
    qtbot.addWidget(main_window)
    main_window.show()
    qtbot.waitExposed(main_window)
    return main_window


@pytest.fixture
def titled_pdf(tmp_path: Path) -> Callable[[str], Path]:
    """Makes a one-page paper whose printed title (large type at the top) and info title are the given text."""

    def make(title: str) -> Path:
        return _titled_pdf(tmp_path / f"titled-{abs(hash(title)):x}.pdf", title)

    return make


def _titled_pdf(path: Path, title: str, body_lines: int = 40) -> Path:
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 80), title, fontsize=20)
    lines = [f"Body line {n}: retrieval systems should cite the passages they rely on." for n in range(body_lines)]
    page.insert_text((72, 130), lines, fontsize=10, lineheight=1.4)
    document.set_metadata({"title": title})
    document.save(path)
    document.close()
    return path


@pytest.fixture
def viewer(qtbot: QtBot) -> PdfViewer:
    """A shown PDF viewer, 700 x 800, with nothing open."""
    shown = PdfViewer()
    qtbot.addWidget(shown)
    shown.resize(700, 800)
    shown.show()
    qtbot.waitExposed(shown)
    return shown
