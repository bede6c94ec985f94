"""The question-and-answer pane: question box and scope, a stage indicator with Cancel, the streaming
answer with clickable citations, export and copy, and the past questions."""

from __future__ import annotations

import html
import time
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QMimeData, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
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

EVERYTHING, LIBRARY, SELECTED = "everything", "library", "selected"
SCOPES = ((EVERYTHING, "Everything"), (LIBRARY, "Library only"), (SELECTED, "Selected papers"))
STAGE_NAMES = {"retrieving": "Retrieving passages", "rewriting": "Rewriting the question",
               "reranking": "Reranking passages", "drafting": "Drafting the answer", "feedback": "Reviewing the draft",
               "revising": "Revising", "verifying": "Verifying citations"}
ANSWER_ID_ROLE = Qt.ItemDataRole.UserRole + 1
_STREAM_REFRESH_MS = 60
_WELCOME = ('<div style="color:#777;line-height:150%"><p style="font-size:large;color:#444">Ask your papers</p>'
            "<p>Type a literature question above and press <b>Ctrl+Enter</b>. The answer streams in here; "
            "every claim cites a passage, and clicking a citation <b>[n]</b> opens the paper at that page "
            "with the supporting words highlighted.</p>"
            "<p>Choose a scope to ask across everything, only your library, or just the papers selected "
            "in the library.</p></div>")


class AskPane(QWidget):
    ask_requested = Signal(str, str)  # question, scope
    cancel_requested = Signal()
    citation_activated = Signal(int, int)  # reference number, sentence index (-1: the references list)
    history_activated = Signal(str)  # answer id
    export_requested = Signal(str)  # "markdown" | "bibtex"

    def __init__(self, ask_action: QAction, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.answer: Answer | None = None
        self._stream = ""
        self._stage = ""
        self._question = ""
        self._answering = False

        self.question_box = QPlainTextEdit(self)
        self.question_box.setPlaceholderText("Ask a question about your papers…   (Ctrl+Enter)")
        self.question_box.setAccessibleName("Question")
        self.question_box.setTabChangesFocus(True)
        self.question_box.setFixedHeight(self.question_box.fontMetrics().lineSpacing() * 3 + 16)
        self.scope_box = QComboBox(self)
        self.scope_box.setAccessibleName("Scope")
        self.scope_box.setToolTip("Where to look for the answer")
        for key, label in SCOPES:
            self.scope_box.addItem(label, key)
        self.ask_button = QPushButton("Ask", self)
        self.ask_button.setObjectName("askButton")
        self.ask_button.setAccessibleName("Ask")
        self.ask_button.setToolTip("Ask the question (Ctrl+Enter)")
        self.ask_button.setDefault(True)
        self.ask_button.clicked.connect(ask_action.trigger)

        self.stage_label = QLabel(self)
        self.stage_label.setTextFormat(Qt.TextFormat.PlainText)
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
        self.history = QListWidget(self)
        self.history.setAccessibleName("Past questions")
        self.history.setWordWrap(True)
        self.history.itemActivated.connect(self._on_history_item)
        self.history.itemDoubleClicked.connect(self._on_history_item)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.answer_view, "Answer")
        self.tabs.addTab(self.history, "Past questions")

        self.copy_button = self._tool_button("Copy", "Copy the answer as rich text, with its references",
                                             self.copy_rich_text)
        self.markdown_button = self._tool_button("Markdown…", "Export the answer and its references as Markdown",
                                                 lambda: self.export_requested.emit("markdown"))
        self.bibtex_button = self._tool_button("BibTeX…", "Export the cited papers as BibTeX",
                                               lambda: self.export_requested.emit("bibtex"))
        self.tabs.setCornerWidget(self._corner(), Qt.Corner.TopRightCorner)

        question_row = QHBoxLayout()
        question_row.addWidget(self.scope_box, 1)
        question_row.addStretch(1)
        question_row.addWidget(self.ask_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 8, 4, 8)
        layout.setSpacing(6)
        layout.addWidget(self.question_box)
        layout.addLayout(question_row)
        layout.addWidget(self.stage_row)
        layout.addWidget(self.tabs, 1)

        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(_STREAM_REFRESH_MS)
        self._refresh_timer.timeout.connect(self._show_stream)
        self._update_exports()

    # --- public ----------------------------------------------------------------------------

    def question(self) -> str:
        return self.question_box.toPlainText().strip()

    def scope(self) -> str:
        return str(self.scope_box.currentData())

    def start_answer(self, question: str) -> None:
        self.answer = None
        self._stream, self._stage, self._question, self._answering = "", "retrieving", question, True
        self.tabs.setCurrentWidget(self.answer_view)
        self.set_stage("retrieving")
        self._show_stream()
        self.stage_row.show()
        self.ask_button.setEnabled(False)
        self._update_exports()

    def set_stage(self, stage: str) -> None:
        self._stage = stage
        self.stage_label.setText(STAGE_NAMES.get(stage, stage.capitalize()) + "…")
        if stage in ("drafting", "revising"):
            self._stream = ""  # each writing pass streams its own text
        self._refresh_timer.start()

    def append_token(self, text: str) -> None:
        self._stream += text
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def show_answer(self, answer: Answer) -> None:
        self.finish()
        self.answer = answer
        self.answer_view.setHtml(_question_html(answer.question) + answer_html(answer))
        self._update_exports()

    def finish(self) -> None:
        """Answering ended (answered, failed or cancelled): hide the stage row, allow asking again."""
        self._refresh_timer.stop()
        self._answering = False
        self.stage_row.hide()
        self.ask_button.setEnabled(True)

    def set_cancelling(self) -> None:
        self.stage_label.setText("Stopping…")

    def set_history(self, answers: Sequence[Any]) -> None:
        """Past questions (anything with ``id``, ``question`` and ``created_at``), newest first."""
        self.history.clear()
        for past in answers:
            item = QListWidgetItem(past.question)  # a plain-text item: questions are never markup
            item.setData(ANSWER_ID_ROLE, past.id)
            when = time.strftime("%d %b %Y, %H:%M", time.localtime(past.created_at)) if past.created_at else ""
            item.setToolTip(f"Asked {when} · double-click to reopen" if when else "Double-click to reopen")
            self.history.addItem(item)

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
        for button in (self.copy_button, self.markdown_button, self.bibtex_button):
            layout.addWidget(button)
        return corner

    def _update_exports(self) -> None:
        for button in (self.copy_button, self.markdown_button, self.bibtex_button):
            button.setEnabled(self.answer is not None)

    def _show_stream(self) -> None:
        if not self._answering:
            return
        stage = STAGE_NAMES.get(self._stage, self._stage)
        bar = self.answer_view.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        self.answer_view.setHtml(_question_html(self._question) + streaming_html(self._stream, stage))
        if at_end:
            bar.setValue(bar.maximum())

    def _on_link(self, url: QUrl) -> None:
        cite = parse_cite_url(url)
        if cite is not None:
            n, sentence = cite
            self.citation_activated.emit(n, -1 if sentence is None else sentence)

    def _on_history_item(self, item: QListWidgetItem) -> None:
        answer_id = item.data(ANSWER_ID_ROLE)
        if answer_id:
            self.history_activated.emit(str(answer_id))


def _question_html(question: str) -> str:
    return f'<p style="font-weight:600;font-size:large;margin-bottom:8px">{html.escape(question)}</p>'
