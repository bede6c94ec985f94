"""The question-and-answer pane: question box and scope, a stage indicator with Cancel, the streaming
answer with clickable citations, export and copy, and the past questions."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QEvent, QMimeData, QObject, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engine.types import Answer
from ui.answer_html import answer_html, parse_cite_url, streaming_html
from ui.answer_progress import PHASES, READING, WRITING, AnswerProgress
from ui.claim_check import parse_check_url
from ui.elided_label import ElidedLabel
from ui.errors import for_the_app
from ui.history_list import ANSWER_ID_ROLE, HistoryList
from ui.scope_box import EVERYTHING, LIBRARY, SCOPES, SELECTED, NetworkNote, ScopeBox

SMALL_MODEL_WARNING = ("The language model is too small to write answers that hold up against your papers: "
                       "a written answer takes minutes and is usually replaced by the evidence digest.")
STAGE_NAMES = PHASES  # the stage names the view's caption shows while streaming
__all__ = ["ANSWER_ID_ROLE", "EVERYTHING", "LIBRARY", "SCOPES", "SELECTED", "AskPane"]
_STREAM_REFRESH_MS = 60
STOPPED_KEPT = "Stopped. What was written so far is kept; ask again whenever you are ready."
STOPPED_EMPTY = "Stopped before anything was written; ask again whenever you are ready."
_WELCOME = ('<div style="color:#777;line-height:150%"><p style="font-size:large;color:#444">Ask your papers</p>'
            "<p>Type a literature question above and press <b>Enter</b> (Shift+Enter starts a new line). "
            "The answer streams in here; "
            "every claim cites a passage, and clicking a citation <b>[n]</b> opens the paper at that page "
            "with the supporting words highlighted.</p>"
            "<p>Choose a scope to ask across everything, only your library, or just the papers selected "
            "in the library.</p></div>")


class AskPane(QWidget):
    cancel_requested = Signal()
    citation_activated = Signal(int, int)  # reference number, sentence index (-1: the references list)
    history_activated = Signal(str)  # answer id
    history_delete_requested = Signal(str)  # answer id
    check_passage_activated = Signal(int)  # index of a passage in the claim check shown
    export_requested = Signal(str)  # "markdown" | "bibtex" | "highlights"

    def __init__(self, ask_action: QAction, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.answer: Answer | None = None
        self._shown: Answer | None = None  # the answer as drawn (with the app's notices)
        self._stream = ""
        self._stage = ""
        self._question = ""
        self._answering = False
        self.viewing_past = False  # a past answer is shown while a question is being answered
        self.search_notes: list[str] = []  # "also searching for …" reports of the question being answered

        self.question_box = QPlainTextEdit(self)
        self.question_box.setPlaceholderText("Ask a question about your papers…   (Enter; Shift+Enter for a new line)")
        self.question_box.setAccessibleName("Question")
        self.question_box.setTabChangesFocus(True)
        self._ask_action = ask_action
        self.question_box.installEventFilter(self)  # Enter asks, Shift+Enter is a new line, as in chat apps
        self.question_box.setFixedHeight(self.question_box.fontMetrics().lineSpacing() * 3 + 16)
        self.scope_box = ScopeBox(self)
        self.ask_button = QPushButton("Ask", self)
        self.ask_button.setObjectName("askButton")
        self.ask_button.setAccessibleName("Ask")
        self.ask_button.setToolTip("Ask the question (Enter)")
        self.ask_button.setDefault(True)
        self.ask_button.clicked.connect(ask_action.trigger)
        self.write_box = QCheckBox("Written answer", self)
        self.write_box.setAccessibleName("Written answer")
        self.write_box.setToolTip("Let the language model write the answer in prose (each sentence is still checked "
                                  "against its sources). Unticked, Quire decides: with a small model it shows the "
                                  "evidence itself, grouped by theme.")

        # Elided to the width it is given: progress text that grows while an answer is drafted must
        # never widen this pane and squeeze the library beside it.
        self.stage_label = ElidedLabel(self)
        self.stage_label.setAccessibleName("Answer stage")
        self.stage_bar = QProgressBar(self)
        self.stage_bar.setRange(0, 0)
        self.stage_bar.setFixedWidth(90)
        self.stage_bar.setMaximumHeight(8)
        self.stage_bar.setTextVisible(False)
        self.cancel_button = QToolButton(self)
        self.cancel_button.setText("Cancel")
        self.cancel_button.setAccessibleName("Cancel the answer")
        self.cancel_button.setToolTip("Stop answering (Esc)")
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.stage_row = QWidget(self)
        stage_layout = QHBoxLayout(self.stage_row)
        stage_layout.setContentsMargins(0, 0, 0, 0)
        stage_layout.addWidget(self.stage_bar)
        stage_layout.addWidget(self.stage_label, 1)
        stage_layout.addWidget(self.cancel_button)
        self.stage_row.hide()

        self.answer_view = QTextBrowser(self)
        self.answer_view.setAccessibleName("Answer")
        self.answer_view.setOpenLinks(False)
        self.answer_view.setOpenExternalLinks(False)
        self.answer_view.anchorClicked.connect(self._on_link)
        self.answer_view.setHtml(_WELCOME)
        self.history = HistoryList(self)
        self.history.open_requested.connect(self.history_activated)
        self.history.delete_requested.connect(self.history_delete_requested)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.answer_view, "Answer")
        self.tabs.addTab(self.history, "Past questions")

        self.copy_button = self._tool_button("Copy", "Copy the answer as rich text, with its references",
                                             self.copy_rich_text)
        self.markdown_button = self._tool_button("Markdown…", "Export the answer and its references as Markdown",
                                                 lambda: self.export_requested.emit("markdown"))
        self.bibtex_button = self._tool_button("References…", "Export the cited papers as BibTeX, RIS or CSL-JSON",
                                               lambda: self.export_requested.emit("bibtex"))
        self.highlights_button = self._tool_button(
            "Highlights…", "Save highlights to PDFs…: each cited quote as a highlight in its paper, with the "
            "question as its note", lambda: self.export_requested.emit("highlights"))
        # Export buttons under the answer, not in the tab bar's corner: there they squeezed the tab
        # titles ("Past que…") in a narrow pane.
        self.tabs.tabBar().setElideMode(Qt.TextElideMode.ElideNone)
        self.tabs.tabBar().setUsesScrollButtons(False)
        self.export_row = self._corner()

        # Said when "Written answer" is ticked with a model too small to write, before anyone waits.
        self._small_model = False
        self.small_model_note = QLabel(SMALL_MODEL_WARNING + ' <a href="digest">Use the evidence digest</a>', self)
        self.small_model_note.setTextFormat(Qt.TextFormat.RichText)  # fixed text of ours, with one link
        self.small_model_note.setWordWrap(True)
        self.small_model_note.setAccessibleName("Small model warning")
        self.small_model_note.setStyleSheet("color:#6b5d00")
        self.small_model_note.linkActivated.connect(lambda _link: self.write_box.setChecked(False))
        self.small_model_note.hide()
        self.write_box.toggled.connect(self._update_small_model_note)

        self.network_note = NetworkNote(self.scope_box, self)

        question_row = QHBoxLayout()
        question_row.addWidget(self.scope_box, 1)
        question_row.addWidget(self.write_box)
        question_row.addStretch(1)
        question_row.addWidget(self.ask_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 8, 4, 8)
        layout.setSpacing(6)
        layout.addWidget(self.question_box)
        layout.addLayout(question_row)
        layout.addWidget(self.network_note)
        layout.addWidget(self.small_model_note)
        layout.addWidget(self.stage_row)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.export_row)

        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(_STREAM_REFRESH_MS)
        self._refresh_timer.timeout.connect(self._show_stream)
        self.progress = AnswerProgress()
        # Once a second while answering, so the elapsed time and the estimate move even between tokens.
        self._tick_timer = QTimer(self)
        self._tick_timer.setInterval(1000)
        self._tick_timer.timeout.connect(self._show_progress)
        self._update_exports()

    # --- public ----------------------------------------------------------------------------

    def question(self) -> str:
        return self.question_box.toPlainText().strip()

    def scope(self) -> str:
        return self.scope_box.scope()

    def set_scope(self, key: str) -> None:
        self.scope_box.set_scope(key)

    @property
    def collection(self) -> str:
        """The collection asked within, when the scope is a collection."""
        return self.scope_box.collection

    @property
    def collection_names(self) -> Callable[[], list[str]]:
        return self.scope_box.collection_names

    @collection_names.setter
    def collection_names(self, names: Callable[[], list[str]]) -> None:
        self.scope_box.collection_names = names

    def scope_label(self) -> str:
        return self.scope_box.currentText()

    def set_server_datastores(self, servers: Sequence[tuple[str, str]]) -> None:
        """Connected server datastores as (name, user@host/database): the scope line says where a question goes."""
        self.network_note.set_servers(servers)

    def set_small_model(self, small: bool) -> None:
        """Whether the language model in use is too small to write answers (the note says so)."""
        self._small_model = small
        self._update_small_model_note()

    def _update_small_model_note(self) -> None:
        self.small_model_note.setVisible(self._small_model and self.write_box.isChecked())

    def mode(self) -> str | None:
        """``"write"`` when a written answer was asked for, else None (Quire decides)."""
        return "write" if self.write_box.isChecked() else None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.question_box and event.type() == QEvent.Type.KeyPress:
            key_event = event if isinstance(event, QKeyEvent) else None
            if key_event is not None and key_event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                modifiers = key_event.modifiers()
                if modifiers & Qt.KeyboardModifier.ShiftModifier:
                    self.question_box.insertPlainText("\n")
                    return True
                if not modifiers & (Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.MetaModifier):
                    self._ask_action.trigger()
                    return True
        return super().eventFilter(watched, event)

    def start_answer(self, question: str) -> None:
        self.answer = None
        self._stream, self._stage, self._question, self._answering = "", "retrieving", question, True
        self.viewing_past = False
        self.search_notes = []
        self.progress = AnswerProgress(self.progress.budget)
        self._tick_timer.start()
        self.tabs.setCurrentWidget(self.answer_view)
        self.set_stage("retrieving")
        self._show_stream()
        self.stage_row.show()
        self.ask_button.setEnabled(False)
        self._update_exports()

    def set_stage(self, stage: str) -> None:
        if stage.startswith("also searching") and stage not in self.search_notes:
            self.search_notes.append(stage)  # a spelling correction: the final answer says it too
        self._stage = stage
        self.progress.set_stage(stage)
        self._show_progress()
        if stage in ("drafting", "revising"):
            self._stream = ""  # each writing pass streams its own text
        self._refresh_timer.start()

    def append_token(self, text: str) -> None:
        self._stream += text
        self.progress.token()
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def show_answer(self, answer: Answer, *, reopened: bool = False) -> None:
        """Show a finished answer; a reopened past answer also puts its question back in the box."""
        self.finish()
        self.answer = answer
        notes = [] if reopened else [note[0].upper() + note[1:] + "." for note in self.search_notes]
        notice = " ".join(part for part in (for_the_app(answer.notice), *notes) if part)
        shown = replace(answer, notice=notice) if notice != answer.notice else answer
        self._shown = shown
        self.answer_view.setHtml(_question_html(answer.question) + answer_html(shown))
        if reopened:
            self.question_box.setPlainText(answer.question)
        self.tabs.setCurrentWidget(self.answer_view)
        self._update_exports()

    def show_figures(self, answer: Answer, figures: dict[str, bytes]) -> None:
        """Draw the answer again with pictures of the figures it cites, if it is still the one shown."""
        shown = self._shown
        if not figures or self.answer is not answer or shown is None:
            return
        scrolled = self.answer_view.verticalScrollBar().value()
        self.answer_view.setHtml(_question_html(answer.question) + answer_html(shown, figures))
        self.answer_view.verticalScrollBar().setValue(scrolled)

    def show_past_beside(self, answer: Answer) -> None:
        """Show a past answer while a question is being answered: the stage row goes on reporting the
        running question (with its Cancel); its streamed text is no longer drawn over the past answer."""
        self.viewing_past = True
        self._refresh_timer.stop()
        self.answer = answer
        self._shown = answer
        self.answer_view.setHtml(_question_html(answer.question) + answer_html(answer))
        self.tabs.setCurrentWidget(self.answer_view)
        self._update_exports()

    def show_check(self, markup: str) -> None:
        """A claim check's result (built by :func:`ui.claim_check.check_html`, everything escaped)."""
        self.finish()
        self.answer = None
        self.answer_view.setHtml(markup)
        self.tabs.setCurrentWidget(self.answer_view)
        self._update_exports()

    def show_message(self, question: str, message: str) -> None:
        """Say something in the answer area instead of answering (an empty library, say)."""
        self.answer = None
        self.answer_view.setHtml(_question_html(question) + f'<p style="color:#6b5d00">{html.escape(message)}</p>')
        self.tabs.setCurrentWidget(self.answer_view)
        self._update_exports()

    def clear_answer(self) -> None:
        """Back to the welcome text (the answer shown was deleted)."""
        self.answer = None
        self.answer_view.setHtml(_WELCOME)
        self._update_exports()

    def show_failure(self, headline: str) -> None:
        """Answering failed: say so in the answer area instead of leaving the last stage on screen."""
        self.finish()
        self.answer = None
        self.answer_view.setHtml(_question_html(self._question) + '<p style="color:#8c2a1c">'
                                 f"{html.escape(headline)}</p>")
        self._update_exports()

    def show_stopped(self) -> None:
        """Answering was stopped: the text streamed so far stays where it was, under one message that
        says it is kept only when there is some."""
        written = self._stream
        self.finish()
        self.answer = None
        message = STOPPED_KEPT if written.strip() else STOPPED_EMPTY
        body = streaming_html(written, cursor=False) if written.strip() else ""
        self.answer_view.setHtml(_question_html(self._question) + f'<p style="color:#8c2a1c">{html.escape(message)}</p>'
                                 + body)
        self._update_exports()

    def keep_stopped(self, answer: Answer | None) -> None:
        """The stopped question's result arrived: the view stays as it is; a partial answer only enables
        Copy and export, so they give what the engine kept."""
        self.answer = answer
        self._update_exports()

    def finish(self) -> None:
        """Answering ended (answered, failed or cancelled): hide the stage row, allow asking again."""
        self._refresh_timer.stop()
        self._tick_timer.stop()
        self._answering = False
        self.stage_row.hide()
        self.ask_button.setEnabled(True)

    @property
    def answering(self) -> bool:
        return self._answering

    def set_cancelling(self) -> None:
        self.stage_label.set_full_text("Stopping…")

    def set_history(self, answers: Sequence[Any]) -> None:
        """Past questions, newest first (see :class:`~ui.history_list.HistoryList`)."""
        self.history.set_entries(answers)

    def copy_rich_text(self) -> None:
        if self.answer is None:
            return
        mime = QMimeData()
        mime.setHtml(answer_html(self.answer))
        mime.setText(self.answer_view.toPlainText())
        QGuiApplication.clipboard().setMimeData(mime)

    # --- internals -------------------------------------------------------------------------

    def _tool_button(self, text: str, tip: str, slot: object) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        button.setAutoRaise(True)
        button.clicked.connect(slot)
        return button

    def _corner(self) -> QWidget:
        corner = QWidget(self)
        layout = QHBoxLayout(corner)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addStretch(1)
        for button in (self.copy_button, self.markdown_button, self.bibtex_button, self.highlights_button):
            layout.addWidget(button)
        return corner

    def _update_exports(self) -> None:
        for button in (self.copy_button, self.markdown_button, self.bibtex_button, self.highlights_button):
            button.setEnabled(self.answer is not None)

    def _show_progress(self) -> None:
        self.stage_label.set_full_text(self.progress.text())
        if self._stage in ("drafting", "revising") and self._stream == "":
            self._refresh_timer.start()  # the caption says the model is reading

    def _show_stream(self) -> None:
        if not self._answering or self.viewing_past:
            return
        reading = self._stage in WRITING and not self._stream
        stage = READING if reading else STAGE_NAMES.get(self._stage, self._stage)
        bar = self.answer_view.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        self.answer_view.setHtml(_question_html(self._question) + streaming_html(self._stream, stage))
        if at_end:
            bar.setValue(bar.maximum())

    def _on_link(self, url: QUrl) -> None:
        checked = parse_check_url(url)
        if checked is not None:
            self.check_passage_activated.emit(checked)
            return
        cite = parse_cite_url(url)
        if cite is not None:
            n, sentence = cite
            self.citation_activated.emit(n, -1 if sentence is None else sentence)

def _question_html(question: str) -> str:
    return f'<p style="font-weight:600;font-size:large;margin-bottom:8px">{html.escape(question)}</p>'
