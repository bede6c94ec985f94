"""The PDF viewer pane: page rendering with PyMuPDF, zoom, page navigation, selection and copy,
and the highlighted rectangles of a cited passage (its supporting quote drawn more strongly).

Rendering runs on the UI thread on purpose: one page at screen resolution takes a few tens of
milliseconds, and MuPDF holds the GIL while it works, so a render thread would stall the event
loop just as long while adding a second owner of the document.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pymupdf
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QImage, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSpinBox,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engine.types import PageRect, Rect
from ui.elided_label import ElidedLabel
from ui.page_canvas import PageCanvas, join_words
from ui.pdf_find import FindBar, Match
from ui.quote_view import scroll_target, shows_quote, zoom_for_quote
from ui.record_view import RecordView

log = logging.getLogger(__name__)

ZOOM_STEPS = (0.5, 0.67, 0.8, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0)
_MAX_PIXELS = 6000  # a page wider or taller than this at the asked zoom is rendered smaller


class PdfViewer(QWidget):
    """Shows one document at a time, one page at a time."""

    failed = Signal(str)  # a message for the error dialog (the file is gone, damaged, ...)
    page_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("PDF viewer")
        self._document: pymupdf.Document | None = None
        self._path = ""
        self._page = 0  # 1-based; 0 = nothing shown
        self._zoom = 1.25
        self._follow_quote = False  # keep the highlighted quote in view when the pane is resized
        self._quote_boxes: tuple[list[Rect], list[Rect]] = ([], [])  # the cited column and quote on the page shown
        self._fit_width = True
        self._words: list[tuple[Rect, str]] = []  # the current page's words, reading order
        self.highlight_rects: tuple[PageRect, ...] = ()
        self.quote_rects: tuple[PageRect, ...] = ()
        self.figure_rects: tuple[PageRect, ...] = ()  # a cited figure's region
        self._selected_text = ""

        self.canvas = PageCanvas()
        self.canvas.selection_dragged.connect(self._select_in)
        self.canvas.selection_finished.connect(self._select_in)
        self.scroll_area = QScrollArea(self)
        self.scroll_area.setWidget(self.canvas)
        self.scroll_area.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.scroll_area.setAccessibleName("Page")
        self.scroll_area.setObjectName("pageScroll")
        self.record_view = RecordView(self)
        self.placeholder = QLabel("Click a citation [n] in an answer, or double-click a paper,\n"
                                  "to read it here with the supporting passage highlighted.", self)
        self.placeholder.setTextFormat(Qt.TextFormat.PlainText)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setObjectName("placeholder")
        self.stack = QStackedWidget(self)
        for page in (self.placeholder, self.scroll_area, self.record_view):
            self.stack.addWidget(page)

        self._refit = QTimer(self)
        self._refit.setSingleShot(True)
        self._refit.setInterval(80)
        self._refit.timeout.connect(self._fit_now)
        self.title_label = ElidedLabel(self)
        self.title_label.setAccessibleName("Paper title")
        self.title_label.setObjectName("viewerTitle")
        self.title_label.setContentsMargins(6, 4, 6, 2)
        font = self.title_label.font()
        font.setBold(True)
        self.title_label.setFont(font)
        self.title_label.hide()
        self.toolbar = self._create_toolbar()
        self.find_bar = FindBar(self._searchable_document, self._show_find_match, self._end_find, self)
        self._before_find: tuple[tuple[PageRect, ...], tuple[PageRect, ...]] | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.title_label)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.find_bar)
        layout.addWidget(self.stack, 1)
        self._update_controls()

    # --- public ----------------------------------------------------------------------------

    @property
    def path(self) -> str:
        return self._path

    @property
    def current_page(self) -> int:
        return self._page

    @property
    def page_count(self) -> int:
        return self._document.page_count if self._document is not None else 0

    @property
    def zoom(self) -> float:
        return self._zoom

    def open_document(self, path: str, page: int = 1, title: str = "") -> bool:
        """Show ``path`` at ``page``, fitted to the pane's width (nothing cut off to the side); False (and
        a message on :attr:`failed`) if it cannot be opened."""
        if not self._load(path, title):
            return False
        self._fit_width = True
        self.figure_rects = ()
        self.set_highlights((), ())
        self.go_to_page(page)
        self.scroll_area.horizontalScrollBar().setValue(0)
        self._update_controls()
        return True

    def show_passage(self, path: str, page: int, passage_rects: Sequence[PageRect],
                     quote_rects: Sequence[PageRect] = (), title: str = "",
                     figure_rects: Sequence[PageRect] = ()) -> bool:
        """Open ``path`` at ``page`` zoomed so the passage's column fills the pane while the whole quote
        still fits it, highlight the passage and its quote, outline the figure a caption names, and centre
        the quote."""
        self._stop_find()
        if not self._load(path, title):
            return False
        assert self._document is not None
        page = max(1, min(page, self._document.page_count))
        column = [rect for on_page, rect in (tuple(quote_rects) + tuple(passage_rects)) if on_page == page]
        quote = [rect for on_page, rect in quote_rects if on_page == page]
        self._quote_boxes = (column, quote)
        self._zoom = self._quote_zoom(page)
        self._fit_width = not column  # no boxes on this page: show the page's width
        self.highlight_rects, self.quote_rects = tuple(passage_rects), tuple(quote_rects)
        self.figure_rects = tuple(figure_rects)
        self.go_to_page(page)
        self._scroll_to_highlight()
        return True

    def _quote_zoom(self, page: int) -> float:
        """The zoom at which the cited column reads well and the whole quote fits the pane as it is now."""
        assert self._document is not None
        column, quote = self._quote_boxes
        return zoom_for_quote(self._available_width(), float(self.scroll_area.viewport().height()),
                              self._document[page - 1].rect.width, column, quote)

    def _load(self, path: str, title: str) -> bool:
        """Open ``path`` unless it is the document shown, and show its title; nothing is rendered yet."""
        if path != self._path or self._document is None:
            self._stop_find()
            try:
                document = pymupdf.open(path)
            except Exception as exc:
                log.info("Cannot open %s: %s", path, exc)
                self.failed.emit(f"The PDF “{Path(path).name}” cannot be opened ({exc}).\n\n"
                                 f"It was read from {path}. If it was moved or deleted, add it again.")
                return False
            if document.needs_pass:
                document.close()
                self.failed.emit(f"“{Path(path).name}” is encrypted; it cannot be shown without its password.")
                return False
            self.close_document()
            self._document, self._path = document, path
        self.title_label.set_full_text(title or Path(path).name)
        self.title_label.show()
        self.stack.setCurrentWidget(self.scroll_area)
        return True

    def show_record(self, title: str, text: str, *, authors: Sequence[str] = (), year: int | None = None,
                    source: str = "", url: str = "", quote: str = "", removed: bool = False) -> None:
        """A datastore passage without a PDF (or a removed paper's passage): its text, metadata and link."""
        self._stop_find()
        self.record_view.show_record(title, text, authors=authors, year=year, source=source, url=url, quote=quote,
                                     removed=removed)
        self.stack.setCurrentWidget(self.record_view)
        self._update_controls()

    def set_highlights(self, passage_rects: Sequence[PageRect], quote_rects: Sequence[PageRect]) -> None:
        self.highlight_rects = tuple(passage_rects)
        self.quote_rects = tuple(quote_rects)
        self._paint_highlights()

    def start_find(self) -> None:
        """Show the find row (Ctrl+F), keeping the citation highlight to put back when it closes."""
        if self._before_find is None:
            self._before_find = (self.highlight_rects, self.quote_rects)
        self.find_bar.start()

    def _searchable_document(self) -> pymupdf.Document | None:
        """The PDF on screen; None while a datastore record (which has no PDF) or nothing is shown."""
        return self._document if self.stack.currentWidget() is self.scroll_area else None

    def _show_find_match(self, match: Match, matches: Sequence[Match]) -> None:
        if match[0].page != self._page:
            self.go_to_page(match[0].page)
        self.set_highlights([rect for place in matches for rect in place], match)
        self._scroll_to_highlight()

    def _end_find(self) -> None:
        if self._before_find is not None:
            self.set_highlights(*self._before_find)
            self._before_find = None

    def _stop_find(self) -> None:
        """Another paper or passage replaces what was being searched: close the row, restore nothing."""
        self.find_bar.reset()
        self._before_find = None

    def visible_highlights(self) -> tuple[list[Rect], list[Rect]]:
        """The passage and quote rectangles drawn on the page shown now."""
        return list(self.canvas.passage_rects), list(self.canvas.quote_rects)

    def _page_box_changed(self, value: int) -> None:
        if value != self._page:
            self.go_to_page(value)

    def go_to_page(self, page: int) -> None:
        if self._document is None:
            return
        page = max(1, min(page, self._document.page_count))
        self._page = page
        self._follow_quote = False  # another page: the quote no longer decides where the view is
        self._render()
        self._paint_highlights()
        self.scroll_area.verticalScrollBar().setValue(0)
        self._update_controls()
        self.page_changed.emit(page)

    def set_zoom(self, zoom: float, *, fit_width: bool = False) -> None:
        self._zoom = max(ZOOM_STEPS[0], min(zoom, ZOOM_STEPS[-1]))
        self._fit_width = fit_width
        if self._document is not None:
            self._render()
        self._update_controls()

    def selected_text(self) -> str:
        return self._selected_text

    def copy_selection(self) -> None:
        if self._selected_text:
            QGuiApplication.clipboard().setText(self._selected_text)

    def close_document(self) -> None:
        self._stop_find()
        if self._document is not None:
            self._document.close()
        self._document, self._path, self._page, self._words = None, "", 0, []
        self.title_label.hide()
        self.stack.setCurrentWidget(self.placeholder)
        self._update_controls()

    # --- construction ----------------------------------------------------------------------

    def _create_toolbar(self) -> QWidget:
        # A row of buttons rather than a QToolBar: a toolbar hides what does not fit behind a ">>"
        # menu, and the row's minimum width keeps every control visible in a narrow pane.
        bar = QWidget(self)
        bar.setObjectName("viewerToolbar")
        bar.setAccessibleName("Viewer controls")
        self.previous_action = self._action("‹", "Previous page (Page Up)", QKeySequence.StandardKey.MoveToPreviousPage,
                                            lambda: self.go_to_page(self._page - 1))
        self.next_action = self._action("›", "Next page (Page Down)", QKeySequence.StandardKey.MoveToNextPage,
                                        lambda: self.go_to_page(self._page + 1))
        self.page_box = QSpinBox(self)
        self.page_box.setAccessibleName("Page number")
        self.page_box.setKeyboardTracking(False)
        self.page_box.valueChanged.connect(self._page_box_changed)
        self.zoom_out_action = self._action("−", "Zoom out (Ctrl+-)", QKeySequence.StandardKey.ZoomOut,
                                            lambda: self._step_zoom(-1))
        self.zoom_label = QLabel(self)
        self.zoom_label.setAccessibleName("Zoom level")
        self.zoom_label.setMinimumWidth(40)
        self.zoom_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.zoom_in_action = self._action("+", "Zoom in (Ctrl++)", QKeySequence.StandardKey.ZoomIn,
                                           lambda: self._step_zoom(1))
        self.fit_action = self._action("Fit width", "Fit the page to the pane's width (Ctrl+0)", QKeySequence("Ctrl+0"),
                                       lambda: self.set_zoom(self._zoom, fit_width=True))
        self.copy_action = self._action("Copy", "Copy the selected text (Ctrl+C)", QKeySequence.StandardKey.Copy,
                                        self.copy_selection)
        layout = QHBoxLayout(bar)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(0)
        self.toolbar_buttons: list[QToolButton] = []
        for item in (self.previous_action, self.page_box, self.next_action, None,
                     self.zoom_out_action, self.zoom_label, self.zoom_in_action, self.fit_action, None,
                     self.copy_action):
            if item is None:
                layout.addSpacing(4)
            elif isinstance(item, QAction):
                button = QToolButton(bar)
                button.setDefaultAction(item)
                button.setAutoRaise(True)
                self.toolbar_buttons.append(button)
                layout.addWidget(button)
            else:
                layout.addWidget(item)
        layout.addStretch(1)
        return bar

    def add_tool(self, button: QToolButton) -> None:
        """Put a control of another module (the Tables menu) at the end of the toolbar row."""
        layout = self.toolbar.layout()
        assert isinstance(layout, QHBoxLayout)
        layout.insertWidget(layout.count() - 1, button)  # before the stretch that keeps the row left-aligned
        self.toolbar_buttons.append(button)

    def _action(self, text: str, tip: str, shortcut: QKeySequence | QKeySequence.StandardKey, slot: object) -> QAction:
        action = QAction(text, self)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.setShortcut(shortcut)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _available_width(self) -> float:
        """The width a page can take without a horizontal scroll bar, once the vertical one is shown."""
        bar = self.scroll_area.verticalScrollBar()
        width = self.scroll_area.viewport().width() - (0 if bar.isVisible() else bar.sizeHint().width())
        return float(max(width - 8, 50))

    # --- drawing ---------------------------------------------------------------------------

    def _render(self) -> None:
        assert self._document is not None
        page = self._document[self._page - 1]
        if self._fit_width:
            available = self._available_width()
            self._zoom = max(0.2, min(available / max(page.rect.width, 1.0), ZOOM_STEPS[-1]))
        ratio = self.devicePixelRatioF() or 1.0
        scale = min(self._zoom * ratio, _MAX_PIXELS / max(page.rect.width, page.rect.height, 1.0))
        pixmap = page.get_pixmap(matrix=pymupdf.Matrix(scale, scale), alpha=False)
        image = QImage(pixmap.samples, pixmap.width, pixmap.height, pixmap.stride, QImage.Format.Format_RGB888).copy()
        image.setDevicePixelRatio(ratio)
        self.canvas.set_page(image, self._zoom)
        self._words = [(Rect(*word[:4]), word[4]) for word in page.get_text("words", sort=False)]
        self._selected_text = ""
        self.canvas.set_selection(())

    def _paint_highlights(self) -> None:
        on_page = [rect for page, rect in self.highlight_rects if page == self._page]
        quotes = [rect for page, rect in self.quote_rects if page == self._page]
        self.canvas.set_highlights(on_page, quotes)
        self.canvas.set_figures([rect for page, rect in self.figure_rects if page == self._page])

    def _scroll_to_highlight(self) -> None:
        """Bring the quote into view now and again once the scroll area has taken the new page size
        (its scroll ranges follow a zoom only after the layout runs, and would clip the position)."""
        self._follow_quote = True
        self._scroll_now()
        QTimer.singleShot(0, self._scroll_now)

    def highlight_area(self) -> QRectF | None:
        """Where the quote (else the passage) is drawn, in canvas pixels."""
        shown = self.canvas.quote_rects or self.canvas.passage_rects
        if not shown:
            return None
        area = self.canvas.widget_rect(shown[0])
        for rect in shown[1:]:
            area = area.united(self.canvas.widget_rect(rect))
        return area

    def quote_in_view(self) -> bool:
        """Whether the highlighted quote is on screen: all of it when it fits the pane, else the start
        of its first line."""
        area = self.highlight_area()
        if area is None:
            return True
        viewport = self.scroll_area.viewport()
        visible = QRectF(self.scroll_area.horizontalScrollBar().value(), self.scroll_area.verticalScrollBar().value(),
                         viewport.width(), viewport.height())
        return shows_quote(visible, area)

    def _scroll_now(self) -> None:
        area = self.highlight_area()
        if area is None:
            return
        viewport = self.scroll_area.viewport()
        left, top = scroll_target(area, viewport.width(), viewport.height())
        self.scroll_area.horizontalScrollBar().setValue(left)
        self.scroll_area.verticalScrollBar().setValue(top)

    def _step_zoom(self, direction: int) -> None:
        if direction > 0:
            bigger = [step for step in ZOOM_STEPS if step > self._zoom + 1e-3]
            self.set_zoom(bigger[0] if bigger else ZOOM_STEPS[-1])
        else:
            smaller = [step for step in ZOOM_STEPS if step < self._zoom - 1e-3]
            self.set_zoom(smaller[-1] if smaller else ZOOM_STEPS[0])

    def _update_controls(self) -> None:
        has_page = self._document is not None and self.stack.currentWidget() is self.scroll_area
        count = self.page_count
        self.page_box.blockSignals(True)
        self.page_box.setRange(1 if count else 0, max(count, 1) if count else 0)
        self.page_box.setValue(self._page)
        self.page_box.blockSignals(False)
        self.page_box.setSuffix(f" / {count}" if count else "")  # "3 / 12": one control, less width
        for widget in (self.page_box, self.zoom_label):
            widget.setEnabled(has_page)
        self.previous_action.setEnabled(has_page and self._page > 1)
        self.next_action.setEnabled(has_page and self._page < count)
        for action in (self.zoom_in_action, self.zoom_out_action, self.fit_action):
            action.setEnabled(has_page)
        self.copy_action.setEnabled(has_page)
        self.toolbar.setVisible(has_page)
        self.title_label.setVisible(has_page and bool(self.title_label.full_text))
        self.zoom_label.setText(f"{round(self._zoom * 100)} %")

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._document is not None and self._page and (self._fit_width or self._follow_quote):
            self._refit.start()  # once the splitter stops moving, not on every pixel of a drag

    def _fit_now(self) -> None:
        if self._document is None or not self._page:
            return
        if self._fit_width:
            self._render()
            self._paint_highlights()
            self._update_controls()
        elif self._follow_quote and self._quote_boxes[0]:
            # The pane changed size under a citation (the window laid out at 1024x700, a splitter moved): the
            # zoom is chosen again, so the whole quote still fits without clicking the citation again.
            zoom = self._quote_zoom(self._page)
            if abs(zoom - self._zoom) > 0.01:
                self._zoom = zoom
                self._render()
                self._paint_highlights()
                self._update_controls()
        if self._follow_quote and not self.quote_in_view():
            self._scroll_now()  # a narrower pane must not leave the cited words off screen

    # --- selection -------------------------------------------------------------------------

    def _select_in(self, area: QRectF) -> None:
        """Select the words the dragged rectangle touches, in the page's reading order."""
        if area.isNull() or (area.width() < 1 and area.height() < 1):
            self._selected_text = ""
            self.canvas.set_selection(())
            return
        area = area.adjusted(-0.5, -0.5, 0.5, 0.5)  # a purely horizontal drag still touches its line
        chosen = [(rect, word) for rect, word in self._words
                  if area.intersects(QRectF(rect.x0, rect.y0, rect.x1 - rect.x0, rect.y1 - rect.y0))]
        self.canvas.set_selection([rect for rect, _ in chosen])
        self._selected_text = join_words(chosen)
