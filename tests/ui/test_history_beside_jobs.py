"""A past answer opens at once while a long job runs (an answer being written, a table being
built): reading the history is quick work on the quick lane, and the running question goes on."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from engine.bibliography import Bibliography
from engine.progress import CancelToken
from engine.service import Engine
from engine.store.answers import save_answer
from engine.types import Answer, AnswerMode, AnswerSentence, Citation, Document, Reference
from ui.engine_client import EngineClient
from ui.main_window import MainWindow

AT_ONCE_MS = 5_000  # far below the long job, which only ends when the test lets it
TIMEOUT_MS = 30_000


def _past(answer_id: str, question: str) -> Answer:
    reference = Reference(1, "d-0000", "d", "library", Bibliography("A paper"), "Quoted words from the paper.", page=2)
    sentence = AnswerSentence("A claim [1].", (Citation(1, "d-0000", "Quoted words", 0, 12, 0.9),), True,
                              support="supported")
    return Answer(question, sentence.text, (sentence,), (reference,), AnswerMode.WRITTEN, id=answer_id,
                  created_at=1_700_000_000.0)


class SlowWriter(Engine):
    """Writes one sentence, then waits until the test releases it: a long answer, without a model
    (what is tested is the window beside it)."""

    release = threading.Event()

    def ask(self, request: object, *, on_token: Callable[[str], None] | None = None,
            on_stage: Callable[[str], None] | None = None, cancel: CancelToken | None = None) -> Answer:
        assert on_token is not None and on_stage is not None and cancel is not None
        on_stage("drafting")
        on_token("The running answer is being written")
        while not self.release.wait(0.01) and not cancel.cancelled:
            pass
        return Answer("What is running?", "Done.", (AnswerSentence("Done.", support="unchecked"),), (),
                      AnswerMode.WRITTEN, id="new1", created_at=1_700_000_500.0, cancelled=cancel.cancelled)

    def table(self, question: str, columns: object, **_: object) -> None:  # type: ignore[override]
        """A table of papers being built: long, until released."""
        self.release.wait(60)


@pytest.fixture
def slow_window(qtbot: QtBot, tmp_path: Path,
                shown_errors: list[str]) -> Iterator[tuple[MainWindow, SlowWriter, EngineClient]]:
    engine = SlowWriter(tmp_path / "home")
    engine.release = threading.Event()
    client = EngineClient(engine)
    window = MainWindow(client, QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat),
                        progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    yield window, engine, client
    engine.release.set()
    client.shutdown()


def _save_past(client: EngineClient) -> None:
    with Engine(client.home) as engine:
        save_answer(engine.library, _past("p1", "What does SPECTER do?"))


def test_a_past_answer_opens_at_once_while_a_table_is_being_built(
        qtbot: QtBot, slow_window: tuple[MainWindow, SlowWriter, EngineClient]) -> None:
    window, engine, client = slow_window
    qtbot.waitUntil(lambda: not client.busy, timeout=TIMEOUT_MS)
    _save_past(client)
    window.answers.refresh_history()
    qtbot.waitUntil(lambda: window.ask_pane.history.list.count() == 1, timeout=TIMEOUT_MS)
    built: list[object] = []
    client.table("Which data?", client.default_table_columns(), built.append)
    assert client.asking
    window.ask_pane.history.select("p1")
    window.ask_pane.history.open_button.click()
    qtbot.waitUntil(lambda: window.ask_pane.answer is not None, timeout=AT_ONCE_MS)
    assert not engine.release.is_set() and client.asking  # it opened while the table was still being built
    assert "A claim" in window.ask_pane.answer_view.toPlainText()


def _open_past_answer_while_asking(qtbot: QtBot, window: MainWindow, client: EngineClient) -> None:
    """Start a question the slow writer holds, then open the past answer "p1" beside it."""
    pane = window.ask_pane
    qtbot.waitUntil(lambda: not client.busy, timeout=TIMEOUT_MS)
    _save_past(client)
    window.model.set_documents([Document(id="d" * 64, content_hash="d" * 64, path="/p.pdf",
                                         bib=Bibliography("SPECTER"), page_count=3)])
    pane.question_box.setPlainText("What is running?")
    window.ask_action.trigger()
    qtbot.waitUntil(lambda: "being written" in pane.answer_view.toPlainText(), timeout=TIMEOUT_MS)
    window.answers.refresh_history()
    qtbot.waitUntil(lambda: pane.history.list.count() == 1, timeout=AT_ONCE_MS)
    pane.history.select("p1")
    pane.history.open_button.click()
    qtbot.waitUntil(lambda: pane.answer is not None and pane.answer.id == "p1", timeout=AT_ONCE_MS)


def test_a_past_answer_opens_beside_a_question_being_answered_which_goes_on(
        qtbot: QtBot, slow_window: tuple[MainWindow, SlowWriter, EngineClient]) -> None:
    window, engine, client = slow_window
    pane = window.ask_pane
    _open_past_answer_while_asking(qtbot, window, client)
    assert not engine.release.is_set() and client.asking
    shown = pane.answer_view.toPlainText()
    assert "A claim" in shown and "being written" not in shown
    assert pane.stage_row.isVisible() and pane.cancel_button.isEnabled()  # the running question still reports

    engine.release.set()
    qtbot.waitUntil(lambda: not client.asking, timeout=TIMEOUT_MS)
    assert pane.answer is not None and pane.answer.id == "p1"  # the answer being read stays on screen
    assert not pane.stage_row.isVisible() and pane.ask_button.isEnabled()
    assert "ready in Past questions" in window.statusBar().currentMessage()


def test_cancelling_the_running_question_leaves_the_past_answer_on_screen(
        qtbot: QtBot, slow_window: tuple[MainWindow, SlowWriter, EngineClient]) -> None:
    window, _engine, client = slow_window
    pane = window.ask_pane
    _open_past_answer_while_asking(qtbot, window, client)

    window.cancel_action.trigger()  # Esc
    qtbot.waitUntil(lambda: not client.asking, timeout=TIMEOUT_MS)
    assert pane.answer is not None and pane.answer.id == "p1" and "A claim" in pane.answer_view.toPlainText()
    assert "Stopped" not in pane.answer_view.toPlainText() and not pane.stage_row.isVisible()
    assert "ready in Past questions" not in window.statusBar().currentMessage()
