"""What an empty library shows: where to drop papers and how else to add them."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QAction, QColor, QKeySequence, QPainter, QPainterPath, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QCheckBox, QLabel, QPushButton, QVBoxLayout, QWidget

HEADLINE = "Drop PDFs here"
_ICON_HEIGHT = 64


class EmptyState(QWidget):
    """A centred invitation to add papers, with a button for people who do not drag and drop."""

    def __init__(self, add_action: QAction, parent: QWidget | None = None, demo_action: QAction | None = None) -> None:
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
        layout.setContentsMargins(36, 24, 36, 24)
        layout.addStretch(2)
        layout.addSpacing(_ICON_HEIGHT + 24)  # the painted page icon sits here
        layout.addWidget(self.headline)
        layout.addSpacing(8)
        layout.addWidget(self.hint)
        layout.addSpacing(16)
        layout.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignHCenter)
        if demo_action is not None:
            self.demo_button = QPushButton("Try the demo papers", self)
            self.demo_button.setFlat(True)
            self.demo_button.setObjectName("demoButton")
            self.demo_button.setAccessibleName("Try the demo papers")
            self.demo_button.setToolTip(demo_action.toolTip())
            self.demo_button.clicked.connect(demo_action.trigger)
            layout.addSpacing(4)
            layout.addWidget(self.demo_button, 0, Qt.AlignmentFlag.AlignHCenter)
        # Opt-in: an attached datastore takes part in every "Everything" answer from then on.
        self.demo_datastore_box = QCheckBox("With the sample datastore", self)
        self.demo_datastore_box.setAccessibleName("Attach the sample datastore with the demo")
        self.demo_datastore_box.setToolTip("Also attach 3,529 computer-science abstracts and papers (SciREX, SciTLDR). "
                                           "They then take part in answers whose scope is Everything; remove them "
                                           "any time in Tools › Models & Datastores.")
        self.demo_datastore_box.setVisible(demo_action is not None)
        layout.addWidget(self.demo_datastore_box, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(3)

    def paintEvent(self, event: QPaintEvent) -> None:
        """A dashed drop zone with a page icon above the headline."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        zone = QRectF(self.rect()).adjusted(12, 12, -12, -12)
        painter.setPen(QPen(QColor("#b9b7b0"), 1.5, Qt.PenStyle.DashLine))
        painter.setBrush(QColor(255, 255, 255, 140))
        painter.drawRoundedRect(zone, 14, 14)
        centre_x = self.width() / 2
        top = self.headline.geometry().top() - _ICON_HEIGHT - 20
        width = _ICON_HEIGHT * 0.78
        fold = width * 0.3
        left = centre_x - width / 2
        page = QPainterPath()
        page.moveTo(left, top)
        page.lineTo(left + width - fold, top)
        page.lineTo(left + width, top + fold)
        page.lineTo(left + width, top + _ICON_HEIGHT)
        page.lineTo(left, top + _ICON_HEIGHT)
        page.closeSubpath()
        painter.setPen(QPen(QColor("#8e8c85"), 2))
        painter.setBrush(QColor("#ffffff"))
        painter.drawPath(page)
        painter.drawPolyline([QPointF(left + width - fold, top), QPointF(left + width - fold, top + fold),
                              QPointF(left + width, top + fold)])
        painter.setPen(QPen(QColor("#2f6fde"), 2.2, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        arrow_x, arrow_top = centre_x, top + _ICON_HEIGHT * 0.32
        arrow_bottom = top + _ICON_HEIGHT * 0.78
        painter.drawLine(QPointF(arrow_x, arrow_top), QPointF(arrow_x, arrow_bottom))
        painter.drawPolyline([QPointF(arrow_x - 9, arrow_bottom - 9), QPointF(arrow_x, arrow_bottom),
                              QPointF(arrow_x + 9, arrow_bottom - 9)])
        painter.end()
