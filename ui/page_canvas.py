"""One rendered PDF page with highlight rectangles and a text selection drawn over it.

Rectangles arrive in PDF points in PyMuPDF's page space (origin top-left), exactly as the
engine stores them; the canvas scales them by the zoom when it paints, so a highlight stays
on its words at any zoom.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from engine.types import Rect

# Passage: a soft wash over its lines; quote: the words that support the claim, stronger.
PASSAGE_FILL = QColor(255, 214, 10, 70)
QUOTE_FILL = QColor(255, 149, 0, 120)
QUOTE_EDGE = QColor(214, 96, 0, 230)
SELECTION_FILL = QColor(38, 132, 255, 80)
_PAD = 1.5  # points around a line, so descenders sit inside the wash


class PageCanvas(QWidget):
    """Paints a page image; reports rubber-band drags (in page points) for text selection."""

    selection_dragged = Signal(QRectF)  # page points; emitted while dragging
    selection_finished = Signal(QRectF)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setCursor(Qt.CursorShape.IBeamCursor)
        self.setAccessibleName("PDF page")
        self._image = QImage()
        self._zoom = 1.0
        self.passage_rects: tuple[Rect, ...] = ()
        self.quote_rects: tuple[Rect, ...] = ()
        self.selection_rects: tuple[Rect, ...] = ()
        self.figure_rects: tuple[Rect, ...] = ()  # the cited figure's region, outlined
        self._drag_origin: QPoint | None = None

    def set_page(self, image: QImage, zoom: float) -> None:
        self._image = image
        self._zoom = zoom
        self.setFixedSize(image.size() / max(image.devicePixelRatio(), 1.0))
        self.update()

    def set_highlights(self, passage_rects: Sequence[Rect], quote_rects: Sequence[Rect]) -> None:
        self.passage_rects = tuple(passage_rects)
        self.quote_rects = tuple(quote_rects)
        self.update()

    def set_figures(self, rects: Sequence[Rect]) -> None:
        self.figure_rects = tuple(rects)
        self.update()

    def set_selection(self, rects: Sequence[Rect]) -> None:
        self.selection_rects = tuple(rects)
        self.update()

    def widget_rect(self, rect: Rect) -> QRectF:
        """Where a rectangle in page points lands on this widget at the current zoom."""
        z = self._zoom
        return QRectF(QPointF((rect.x0 - _PAD) * z, (rect.y0 - _PAD) * z),
                      QPointF((rect.x1 + _PAD) * z, (rect.y1 + _PAD) * z))

    def sizeHint(self) -> QSize:
        return self.size()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), Qt.GlobalColor.white)
        if not self._image.isNull():
            painter.drawImage(QRect(QPoint(0, 0), self.size()), self._image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
        for rect in self.passage_rects:
            painter.fillRect(self.widget_rect(rect), PASSAGE_FILL)
        for rect in self.quote_rects:
            painter.fillRect(self.widget_rect(rect), QUOTE_FILL)
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
        if self.quote_rects:
            painter.setPen(QPen(QUOTE_EDGE, 1.2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for rect in self.quote_rects:
                painter.drawRoundedRect(self.widget_rect(rect), 2, 2)
            painter.setPen(Qt.PenStyle.NoPen)
        if self.figure_rects:
            # Outlined, not washed: a wash over a plot would change the colours the reader compares.
            painter.setPen(QPen(QUOTE_EDGE, 2.0, Qt.PenStyle.DashLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for rect in self.figure_rects:
                painter.drawRect(self.widget_rect(rect))
            painter.setPen(Qt.PenStyle.NoPen)
        for rect in self.selection_rects:
            painter.fillRect(self.widget_rect(rect), SELECTION_FILL)
        painter.end()

    # --- selection by dragging -------------------------------------------------------------

    def _page_rect(self, a: QPoint, b: QPoint) -> QRectF:
        z = self._zoom or 1.0
        return QRectF(QPointF(a) / z, QPointF(b) / z).normalized()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._drag_origin = event.position().toPoint()
            self.selection_dragged.emit(QRectF())
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._drag_origin is not None:
            self.selection_dragged.emit(self._page_rect(self._drag_origin, event.position().toPoint()))
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._drag_origin is not None and event.button() == Qt.MouseButton.LeftButton:
            self.selection_finished.emit(self._page_rect(self._drag_origin, event.position().toPoint()))
            self._drag_origin = None
        super().mouseReleaseEvent(event)


def join_words(words: Sequence[tuple[Rect, str]]) -> str:
    """Words back into text: a new line wherever the next word starts on a lower line."""
    parts: list[str] = []
    previous: Rect | None = None
    for rect, word in words:
        if previous is not None:
            same_line = rect.y0 < previous.y1 - 0.5 * (previous.y1 - previous.y0) and rect.x0 >= previous.x0
            parts.append(" " if same_line else "\n")
        parts.append(word)
        previous = rect
    return "".join(parts)
