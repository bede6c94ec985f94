"""Cancel: the text written so far stays where it is, under one message, and the engine stops at
once (checked between tokens), so the history holds the partial answer marked cancelled."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from pytestqt.qtbot import QtBot

from engine.bibliography import Bibliography
from engine.config import GenerationSettings, RetrievalSettings, Settings
from engine.models import default_embedder_path, default_lm_path
from engine.progress import CancelToken
from engine.service import Engine
from engine.types import Answer, AnswerMode, AnswerSentence, Document
from ui.answer_html import answer_html
from ui.ask_pane import AskPane
from ui.engine_client import EngineClient
from ui.main_window import MainWindow


def test_stopping_keeps_the_streamed_text_in_place_under_one_message(qtbot: QtBot) -> None:
    pane = AskPane(QAction("Ask"))
    qtbot.addWidget(pane)
    pane.start_answer("How is SPECTER trained?")
    pane.set_stage("drafting")
    pane.append_token("SPECTER is trained on **citation** triplets [1")
    pane.show_stopped()
    shown = pane.answer_view.toPlainText()
    assert "What was written so far is kept" in shown
    assert "SPECTER is trained on citation triplets" in shown and "[1" not in shown
    assert shown.count("Stopped") == 1 and "▍" not in shown
    assert not pane.stage_row.isVisibleTo(pane) and pane.ask_button.isEnabled()


def test_stopping_before_any_text_does_not_claim_something_was_kept(qtbot: QtBot) -> None:
    pane = AskPane(QAction("Ask"))
    qtbot.addWidget(pane)
    pane.start_answer("How is SPECTER trained?")
    pane.set_stage("retrieving")
    pane.show_stopped()
    shown = pane.answer_view.toPlainText()
    assert "Stopped before anything was written" in shown and "kept" not in shown


class ScriptedWriter(Engine):
    """An engine whose "model" writes ``written`` and then waits for Cancel, then ends as the real
    pipeline does: a cancelled answer holding what was written, or Cancelled when nothing was.
    The model is beside the point here: what is tested is what the window does with the ending."""

    written = ""

    def ask(self, request: object, *, on_token: Callable[[str], None] | None = None,
            on_stage: Callable[[str], None] | None = None, cancel: CancelToken | None = None) -> Answer:
        assert on_token is not None and on_stage is not None and cancel is not None
        on_stage("drafting")
        if self.written:
            on_token(self.written)
        deadline = time.monotonic() + 60
        while not cancel.cancelled and time.monotonic() < deadline:
            time.sleep(0.01)
        if not self.written:
            cancel.check()  # nothing written: the engine raises, as its checks between stages do
        return Answer(question="How is SPECTER trained?", text=self.written, references=(),
                      sentences=(AnswerSentence(self.written, support="unchecked"),), mode=AnswerMode.WRITTEN,
                      cancelled=True, notice="Cancelled; what was written so far is kept.", id="c1")


@pytest.mark.parametrize("written", ["SPECTER is trained on citation triplets.", ""])
def test_after_cancel_the_kept_text_and_message_stay_as_they_are(
        qtbot: QtBot, tmp_path: Path, shown_errors: list[str], written: str) -> None:
    engine = ScriptedWriter(tmp_path / "home")
    engine.written = written
    client = EngineClient(engine)
    window = MainWindow(client, QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat),
                        progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.waitUntil(lambda: not client.busy, timeout=30_000)
        window.model.set_documents([Document(id="d" * 64, content_hash="d" * 64, path="/p.pdf",
                                             bib=Bibliography("SPECTER"), page_count=3)])
        stages: list[str] = []
        client.answer_stage.connect(stages.append)
        window.ask_pane.question_box.setPlainText("How is SPECTER trained?")
        window.ask_action.trigger()
        qtbot.waitUntil(lambda: bool(stages), timeout=30_000)
        if written:
            qtbot.waitUntil(lambda: "citation triplets" in window.ask_pane.answer_view.toPlainText(), timeout=30_000)
        window.cancel_action.trigger()
        view = window.ask_pane.answer_view
        stopped = view.toHtml()
        qtbot.waitUntil(lambda: not client.asking, timeout=30_000)  # the engine's ending has been handled
        assert view.toHtml() == stopped, "the view changed after Cancel"
        shown = view.toPlainText()
        assert shown.count("Stopped") == 1
        assert ("What was written so far is kept" in shown) == bool(written)
        assert (written or "Stopped before anything was written") in shown
        assert window.ask_pane.copy_button.isEnabled() == bool(written)  # the kept answer can be copied
    finally:
        client.shutdown()


def test_a_cancelled_answer_shows_one_message_not_two() -> None:
    answer = Answer(question="q", text="SPECTER is trained on citations.", references=(),
                    sentences=(AnswerSentence("SPECTER is trained on citations.", support="unchecked"),),
                    mode=AnswerMode.WRITTEN, cancelled=True, notice="Cancelled; what was written so far is kept.")
    markup = answer_html(answer)
    assert markup.count("what was written so far is kept") == 1 and "Cancelled;" not in markup


CANCEL_TOKEN_SLACK = 8  # tokens already on their way to the window when Cancel was pressed


@pytest.fixture
def writing_client(tmp_path: Path) -> Iterator[EngineClient]:
    settings = Settings(retrieval=RetrievalSettings(rewrite=False, reranker="none", top_n=3),
                        generation=GenerationSettings(feedback=False))
    client = EngineClient(Engine(tmp_path / "home", settings=settings))
    yield client
    client.shutdown()


@pytest.mark.slow
@pytest.mark.skipif(default_lm_path() is None or default_embedder_path() is None,
                    reason="the packaged SmolLM2 / MiniLM are not installed")
def test_cancel_while_drafting_stops_the_real_model_within_a_few_tokens(
        qtbot: QtBot, writing_client: EngineClient, tmp_path: Path, titled_pdf: Callable[[str], Path],
        shown_errors: list[str]) -> None:
    client = writing_client
    window = MainWindow(client, QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat),
                        progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.show()
    window.add_paths([titled_pdf("Retrieval Systems Should Cite Their Passages")])
    qtbot.waitUntil(lambda: not client.busy and window.model.rowCount() == 1, timeout=120_000)

    tokens: list[str] = []
    client.answer_token.connect(tokens.append)
    window.ask_pane.write_box.setChecked(True)
    window.ask_pane.question_box.setPlainText("What should retrieval systems cite?")
    window.ask_action.trigger()
    qtbot.waitUntil(lambda: len(tokens) >= 3 or not client.asking, timeout=300_000)
    assert client.asking, "the model finished before it could be stopped"

    window.cancel_action.trigger()
    at_cancel = len(tokens)
    written = "".join(tokens)
    qtbot.waitUntil(lambda: not client.asking, timeout=30_000)
    # Counted in tokens, not seconds: on a loaded machine a second is a few tokens or many, but a model that
    # was not stopped writes on to its token limit (hundreds) before the answer finishes.
    assert len(tokens) - at_cancel <= CANCEL_TOKEN_SLACK, f"{len(tokens) - at_cancel} tokens after cancel"

    shown = window.ask_pane.answer_view.toPlainText()
    assert shown.count("Stopped") == 1
    assert written.split()[0].strip("*#") in shown  # the partial text never left the view
    past: list[list[object]] = []
    client.list_answers(past.append)
    qtbot.waitUntil(lambda: bool(past), timeout=10_000)
    assert past[0] and getattr(past[0][0], "cancelled", False)
