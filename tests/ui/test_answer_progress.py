"""A written answer reports itself: phase, elapsed time, tokens, speed and what is left; the text
streams with its headings and emphasis rendered and its citation markers whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ui.answer_progress import AnswerProgress
from ui.ask_pane import AskPane
from ui.engine_client import EngineClient
from ui.engine_tasks import is_small_model_file
from ui.main_window import MainWindow
from ui.stream_markup import settled_text, stream_html


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_each_phase_says_what_it_does_and_for_how_long() -> None:
    clock = Clock()
    progress = AnswerProgress(budget=100, clock=clock)
    progress.set_stage("loading")
    clock.now += 12
    assert progress.text() == "Loading the language model… · 12 s"
    progress.set_stage("retrieving")
    clock.now += 3
    assert progress.text() == "Searching your papers… · 3 s"
    progress.set_stage("drafting")
    clock.now += 20
    assert progress.text() == "Reading the passages… · 20 s"  # the prompt is being read: no token yet
    progress.token()
    for _ in range(20):
        clock.now += 0.25
        progress.token()
    # 20 tokens after the first in 5 s: 4 tok/s; 79 of the 100 left: at most ~20 s.
    assert progress.text() == "Drafting the answer: 21 tokens at 4.0 tok/s, at most ~20 s left · 25 s"
    progress.set_stage("verifying")
    assert progress.text() == "Verifying citations… · 0 s"


def test_the_pane_shows_reading_then_the_token_count(qtbot: QtBot) -> None:
    pane = AskPane(QAction("Ask"))
    qtbot.addWidget(pane)
    pane.start_answer("How is SPECTER trained?")
    pane.set_stage("drafting")
    assert pane.stage_label.full_text.startswith("Reading the passages…")
    for piece in ("SPECTER ", "is ", "trained"):
        pane.append_token(piece)
    qtbot.waitUntil(lambda: "3 tokens" in pane.stage_label.full_text, timeout=3000)


def test_headings_and_emphasis_render_while_streaming() -> None:
    markup = stream_html("## How is SPECTER trained?\nWith a **triplet** loss on *citations* [1].")
    assert "##" not in markup and "**" not in markup
    assert '<p style="font-weight:600;margin-top:10px">How is SPECTER trained?</p>' in markup
    assert "<b>triplet</b>" in markup and "<i>citations</i>" in markup


def test_citation_markers_are_never_shown_split() -> None:
    assert settled_text("SPECTER uses citations (") == "SPECTER uses citations"
    assert settled_text("SPECTER uses citations ( [1") == "SPECTER uses citations"
    assert settled_text("SPECTER uses citations [1, ") == "SPECTER uses citations"
    assert settled_text("SPECTER uses citations ( [1]) and more") == "SPECTER uses citations [1] and more"
    assert settled_text("It works ([1, 2]).") == "It works [1, 2]."


def test_what_the_model_writes_stays_text() -> None:
    markup = stream_html("<script>alert(1)</script> **<b>bold</b>**")
    assert "<script>" not in markup and "&lt;b&gt;bold&lt;/b&gt;" in markup


def test_a_model_that_writes_only_headings_or_nothing_shows_no_empty_paragraphs() -> None:
    assert stream_html("#\n##\n", cursor=False) == ""
    assert stream_html("", cursor=True) == "<p>▍</p>"


def test_a_small_model_is_named_before_the_wait_and_the_digest_offered(qtbot: QtBot, client: EngineClient,
                                                                       tmp_path: Path,
                                                                       shown_errors: list[str]) -> None:
    window = MainWindow(client, QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat),
                        progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.show()
    pane = window.ask_pane
    small = is_small_model_file("")  # the bundled model, which the fresh settings use
    seen: list[bool] = []  # asked after the window's own question, so it answers after it (one lane, in order)
    client.model_is_small(seen.append)
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    pane.write_box.setChecked(True)
    assert pane.small_model_note.isVisible() == small
    if small:
        assert "too small" in pane.small_model_note.text()
        pane.small_model_note.linkActivated.emit("digest")
        assert not pane.write_box.isChecked() and not pane.small_model_note.isVisible()


@pytest.mark.parametrize(("width", "height"), [(1024, 700), (1366, 768), (1920, 1080)])
def test_long_progress_text_never_moves_the_layout(qtbot: QtBot, window: MainWindow, client: EngineClient,
                                                   width: int, height: int) -> None:
    qtbot.waitUntil(lambda: not client.busy, timeout=120_000)
    window.resize(width, height)
    qtbot.waitUntil(lambda: window.size().width() == width, timeout=5_000)
    pane = window.ask_pane
    pane.start_answer("How do error-prone polymerases copy damaged DNA?")
    QApplication.processEvents()
    before = window.splitter.sizes()
    long_stage = "also searching for " + "“translesion synthesis by error-prone DNA polymerases in bacteria” " * 4
    pane.set_stage(long_stage)
    for _ in range(5):  # let every layout request queued by the new text run
        QApplication.processEvents()
    assert window.splitter.sizes() == before, f"the progress text moved the panes at {width}x{height}"
    assert pane.stage_label.full_text.startswith("Also searching for")
    shown = pane.stage_label.text()
    assert shown.endswith("…") and pane.stage_label.fontMetrics().horizontalAdvance(shown) <= pane.stage_label.width()
    pane.finish()
