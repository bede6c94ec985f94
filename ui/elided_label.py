"""A one-line label that shortens its text to the width it is given, never the other way round."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """One line of plain text, shortened with "…" to the width it gets (the full text in its tooltip).

    Its width policy is Ignored: a long text never widens the layout around it, so a title or a
    progress line that grows cannot push a splitter or squeeze a neighbouring pane.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.full_text = ""
        self.setTextFormat(Qt.TextFormat.PlainText)  # titles come from PDFs
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def set_full_text(self, text: str) -> None:
        self.full_text = " ".join(text.split())
        self.setToolTip(self.full_text)
        self._elide()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        width = self.width() - self.contentsMargins().left() - self.contentsMargins().right()
        self.setText(self.fontMetrics().elidedText(self.full_text, Qt.TextElideMode.ElideRight, max(width, 20)))
