"""The app follows what other processes do to its library while it is open.

The CLI (and the MCP server, and a watched folder) may remove, add or answer in the library the app
shows. Each change here is made by a real `quire` subprocess, or by a subprocess driving the engine,
on the library the open window uses; the window's list, details, open PDF and history must follow
within a few seconds, with no error dialog, and acting on a paper removed elsewhere says so in the
app's words (never a CLI hint).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from engine.service import Engine
from engine.store.answers import save_answer
from engine.types import Answer, AnswerMode, AnswerSentence
from ui.engine_client import EngineClient
from ui.engine_worker import PAPER_GONE
from ui.library_model import Column
from ui.main_window import MainWindow

pytestmark = pytest.mark.slow  # subprocesses of the CLI

REPO = Path(__file__).resolve().parents[2]
FOLLOW_MS = 10_000  # "within a few seconds": the window looks once a second


def quire(home: Path, *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "engine.cli.main", "--home", str(home), *args],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=120, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr


def save_answer_elsewhere(home: Path, answer_id: str) -> None:
    """Another process answering (as the MCP server does): the engine saves an answer in the history."""
    script = ("from engine.service import Engine\nfrom engine.store.answers import save_answer\n"
              "from engine.types import Answer, AnswerMode\n"
              f"answer = Answer(question='Question {answer_id}?', text='', sentences=(), references=(), "
              f"mode=AnswerMode.DIGEST, id={answer_id!r}, created_at=9.0)\n"
              f"with Engine({str(home)!r}) as engine:\n    save_answer(engine.library, answer)\n")
    done = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=120, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr


def past_answer(answer_id: str) -> Answer:
    sentence = AnswerSentence("MapReduce splits a job into map and reduce tasks.", needs_citation=False,
                              supported=True)
    return Answer(question=f"Question {answer_id}?", text=sentence.text, sentences=(sentence,), references=(),
                  mode=AnswerMode.DIGEST, id=answer_id, created_at=float(len(answer_id)))


@pytest.fixture
def library(tmp_path: Path, titled_pdf: Callable[[str], Path]) -> dict[str, str]:
    """A library of two papers and two past answers, made before the app opens; returns their ids by name."""
    home = tmp_path / "home"
    with Engine(home) as engine:
        ids = {}
        for title in ("MapReduce Simplified Data Processing", "Dremel Interactive Analysis"):
            result = next(iter(engine.add_documents([titled_pdf(title)])))
            ids[title.split()[0]] = str(result.doc_id)
        save_answer(engine.library, past_answer("first"))
        save_answer(engine.library, past_answer("second"))
    return ids


@pytest.fixture
def open_window(qtbot: QtBot, tmp_path: Path, library: dict[str, str], window_settings: QSettings,
                shown_errors: list[str]) -> Iterator[MainWindow]:
    client = EngineClient(Engine(tmp_path / "home"))
    window = MainWindow(client, window_settings, progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.model.rowCount() == 2 and len(window.ask_pane.history.ids()) == 2)
    yield window
    client.shutdown()


def select(window: MainWindow, doc_id: str) -> None:
    row = window.model.row_of(doc_id)
    assert row is not None
    proxy_index = window.library.proxy.mapFromSource(window.model.index(row, Column.TITLE))
    window.table.selectRow(proxy_index.row())


def test_list_details_viewer_and_history_follow_another_process(
        qtbot: QtBot, tmp_path: Path, library: dict[str, str], open_window: MainWindow,
        titled_pdf: Callable[[str], Path]) -> None:
    window, home, mapreduce = open_window, tmp_path / "home", library["MapReduce"]
    select(window, mapreduce)
    window.library.open_requested.emit(mapreduce)
    qtbot.waitUntil(lambda: "MapReduce" in window.library.details.toPlainText() and bool(window.viewer.path))

    quire(home, "library", "remove", mapreduce)
    qtbot.waitUntil(lambda: window.model.row_of(mapreduce) is None, timeout=FOLLOW_MS)
    assert "MapReduce" not in window.library.details.toPlainText()
    assert window.viewer.path == "", "the removed paper's PDF is still open"
    assert "removed from the library by another program" in window.statusBar().currentMessage()

    added = titled_pdf("Spanner Globally Distributed Database")
    quire(home, "ingest", "--no-embed", str(added))
    qtbot.waitUntil(lambda: window.model.rowCount() == 2, timeout=FOLLOW_MS)
    window.library.filter_box.setText("Spanner")
    assert window.library.proxy.rowCount() == 1

    quire(home, "answers", "delete", "first")
    save_answer_elsewhere(home, "third")
    qtbot.waitUntil(lambda: sorted(window.ask_pane.history.ids()) == ["second", "third"], timeout=FOLLOW_MS)


def test_editing_a_paper_removed_elsewhere_says_so_in_the_apps_words(
        qtbot: QtBot, tmp_path: Path, library: dict[str, str], open_window: MainWindow,
        shown_errors: list[str]) -> None:
    window, dremel = open_window, library["Dremel"]
    quire(tmp_path / "home", "library", "remove", dremel)
    # The user pressed Save in the details dialog before the window looked again.
    window._client.update_metadata(dremel, title="Dremel, corrected")
    qtbot.waitUntil(lambda: bool(shown_errors))
    assert shown_errors == [PAPER_GONE] and "quire" not in PAPER_GONE
    shown_errors.clear()
    qtbot.waitUntil(lambda: window.model.row_of(dremel) is None, timeout=FOLLOW_MS)
