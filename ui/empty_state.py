"""What an empty library shows: where to drop papers and how else to add them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QPalette
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

HEADLINE = "Drop PDFs here"


class EmptyState(QWidget):
    """A centred invitation to add papers, with a button for people who do not drag and drop."""

    def __init__(self, add_action: QAction, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Empty library")

        self.headline = QLabel(HEADLINE, self)
        self.headline.setTextFormat(Qt.TextFormat.PlainText)
        self.headline.setAlignment(Qt.AlignmentFlag.AlignCenter)
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.8)
        font.setBold(True)
        self.headline.setFont(font)

        shortcut = add_action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        self.hint = QLabel(
            "Drop PDF files or folders anywhere on this window, or choose them with "
            f"File › Add PDFs… ({shortcut}).\nPapers are read on this computer; nothing is uploaded.", self)
        self.hint.setTextFormat(Qt.TextFormat.PlainText)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)
        self.hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)  # secondary text, in any theme

        self.add_button = QPushButton("Add PDFs…", self)
        self.add_button.setAccessibleName("Add PDFs")
        self.add_button.clicked.connect(add_action.trigger)

        layout = QVBoxLayout(self)
        layout.addStretch(2)
        layout.addWidget(self.headline)
        layout.addSpacing(8)
        layout.addWidget(self.hint)
        layout.addSpacing(16)
        layout.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(3)
