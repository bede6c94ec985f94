"""Past questions: each with its date, scope, model and status; open one (it replaces the answer on
the Answer tab and its question in the question box) or delete it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QAction, QFontMetrics, QKeySequence, QRawFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

ANSWER_ID_ROLE = Qt.ItemDataRole.UserRole + 1
QUESTION_ROLE = Qt.ItemDataRole.UserRole + 2
_STATUS = {"written": "Answered", "digest": "Evidence digest", "no evidence": "Nothing relevant found"}


def status_text(mode: str, cancelled: bool, asked: str = "") -> str:
    """How a past question ended, in words: a cancelled run is never mistaken for an answer, nor a
    digest given instead of the written answer asked for for one."""
    if cancelled:
        return "Cancelled (partial)"
    if mode == "digest" and asked == "write":
        return "Evidence digest instead of a written answer"
    return _STATUS.get(mode, mode.capitalize())


def summary_line(past: Any) -> str:
    """``23 Nov 2026, 18:20 · Library only · SmolLM2-135M · Answered`` for a history entry."""
    when = time.strftime("%d %b %Y, %H:%M", time.localtime(past.created_at)) if past.created_at else ""
    model = PurePath(getattr(past, "model", "") or "").name
    scope = getattr(past, "scope", "") or ""
    status = status_text(past.mode, past.cancelled, getattr(past, "asked", ""))
    parts = [when, scope, model.removesuffix(".gguf"), status]
    return " · ".join(part for part in parts if part)


class _FallbackRoom(QStyledItemDelegate):
    """Rows whose text needs a fallback font (a Chinese question) get a little more height.

    The view measures a wrapped row with the list font's metrics, but a line set in a taller fallback
    font (Noto Sans CJK) needs a few pixels more when painted; short of them, the view elides the row
    after its first line and the date and mode line is lost."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        # QRawFont: the font itself (QFontMetrics.inFont answers for its fallbacks too).
        own = QRawFont.fromFont(option.font)
        text = str(index.data() or "")
        if any(not own.supportsCharacter(char) for char in text if not char.isspace()):
            size.setHeight(size.height() + QFontMetrics(option.font).lineSpacing() // 3)
        return size


class HistoryList(QWidget):
    """A list of past questions with Open and Delete; ``open_requested``/``delete_requested`` carry the id."""

    open_requested = Signal(str)
    delete_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Past questions")
        self.list = QListWidget(self)
        self.list.setAccessibleName("Past questions list")
        self.list.setWordWrap(True)
        self.list.setItemDelegate(_FallbackRoom(self.list))
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.itemActivated.connect(self._open_item)
        self.list.itemDoubleClicked.connect(self._open_item)
        self.list.itemSelectionChanged.connect(self._update_buttons)
        self.empty_label = QLabel("Questions you ask are kept here.", self)
        self.empty_label.setTextFormat(Qt.TextFormat.PlainText)
        self.empty_label.setWordWrap(True)  # never what sets the pane's minimum width
        self.open_button = QPushButton("Open", self)
        self.open_button.setToolTip("Show this answer on the Answer tab (Enter or double-click)")
        self.open_button.clicked.connect(self.open_selected)
        self.delete_button = QPushButton("Delete", self)
        self.delete_button.setToolTip("Delete this question and its answer from the history (Delete)")
        self.delete_button.clicked.connect(self.delete_selected)
        delete_action = QAction("Delete from History", self.list)
        delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        delete_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        delete_action.triggered.connect(self.delete_selected)
        open_action = QAction("Open", self.list)
        open_action.triggered.connect(self.open_selected)
        self.list.addAction(open_action)
        self.list.addAction(delete_action)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)

        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.empty_label, 1)
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.delete_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        self._update_buttons()

    def set_entries(self, answers: Sequence[Any]) -> None:
        """Past questions (``id``, ``question``, ``created_at``, ``mode``, ``cancelled``, ``model``, ``scope``)."""
        selected = self.selected_id()
        self.list.clear()
        for past in answers:
            question = " ".join(past.question.split())
            # Plain-text items: a question is never markup.
            item = QListWidgetItem(f"{question}\n{summary_line(past)}")
            item.setData(ANSWER_ID_ROLE, past.id)
            item.setData(QUESTION_ROLE, past.question)
            item.setToolTip(f"{question}\n{summary_line(past)}\nDouble-click or Enter to open; Delete to remove")
            if past.cancelled:
                font = item.font()
                font.setItalic(True)
                item.setFont(font)
            self.list.addItem(item)
            if past.id == selected:
                item.setSelected(True)
        self.empty_label.setText("" if answers else "Questions you ask are kept here.")
        self._update_buttons()

    def ids(self) -> list[str]:
        return [str(self.list.item(row).data(ANSWER_ID_ROLE)) for row in range(self.list.count())]

    def selected_id(self) -> str:
        items = self.list.selectedItems()
        return str(items[0].data(ANSWER_ID_ROLE)) if items else ""

    def select(self, answer_id: str) -> bool:
        for row in range(self.list.count()):
            if self.list.item(row).data(ANSWER_ID_ROLE) == answer_id:
                self.list.setCurrentRow(row)
                return True
        return False

    def open_selected(self) -> None:
        if self.selected_id():
            self.open_requested.emit(self.selected_id())

    def delete_selected(self) -> None:
        if self.selected_id():
            self.delete_requested.emit(self.selected_id())

    def _open_item(self, item: QListWidgetItem) -> None:
        answer_id = item.data(ANSWER_ID_ROLE)
        if answer_id:
            self.open_requested.emit(str(answer_id))

    def _update_buttons(self) -> None:
        has = bool(self.selected_id())
        self.open_button.setEnabled(has)
        self.delete_button.setEnabled(has)
