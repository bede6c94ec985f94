"""Where the viewer looks when it opens a cited passage: the zoom that shows the whole quote, and
the scroll position that centres it. Plain geometry in pixels and PDF points, so it can be tested
without a window.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRectF

from engine.types import Rect

# A cited passage opens so its column fills the pane, between these zooms: 1.2 makes 9-10 pt
# paper text 15-16 px high, as readable as the app's own text; more would hide the context.
READABLE_ZOOM = (1.2, 2.0)
_MARGIN_PX = 16  # room left around the column or quote, so its edges are not flush with the pane
_PAD_PT = 24  # the same, in points, around the text's boxes


def _span(rects: Sequence[Rect]) -> tuple[float, float]:
    """Width and height, in points, of the box around ``rects``."""
    return (max(r.x1 for r in rects) - min(r.x0 for r in rects), max(r.y1 for r in rects) - min(r.y0 for r in rects))


def zoom_for_quote(width_px: float, height_px: float, page_width_pt: float, column: Sequence[Rect],
                   quote: Sequence[Rect]) -> float:
    """The zoom for a cited passage: its column filling the pane at a readable size, but never so large
    that the quote (else the passage) does not fit the pane whole, and never smaller than the zoom
    that fits the page's width (at which any quote fits across)."""
    page_fit = width_px / max(page_width_pt, 1.0)
    if not column:
        return page_fit
    column_width, _ = _span(column)
    readable = (width_px - _MARGIN_PX) / max(column_width + _PAD_PT, 1.0)
    zoom = max(READABLE_ZOOM[0], min(readable, READABLE_ZOOM[1]))
    quote_width, quote_height = _span(quote or column)
    fits_across = (width_px - _MARGIN_PX) / max(quote_width + _PAD_PT, 1.0)
    fits_down = (height_px - _MARGIN_PX) / max(quote_height + _PAD_PT, 1.0)
    return max(min(zoom, fits_across, fits_down), min(page_fit, zoom))


def scroll_target(area: QRectF, viewport_width: float, viewport_height: float) -> tuple[int, int]:
    """Scroll bar values that centre ``area`` (canvas pixels); one wider than the pane starts at its
    left edge (lines are read from there), one taller starts a third of the way down."""
    if area.width() < viewport_width - _MARGIN_PX:
        left = area.center().x() - viewport_width / 2
    else:
        left = area.left() - 8
    if area.height() < viewport_height * 0.8:
        centre_y = area.center().y()
    else:
        centre_y = area.top() + viewport_height / 3
    return int(left), int(centre_y - viewport_height / 2)


def shows_quote(visible: QRectF, area: QRectF) -> bool:
    """Whether the visible part of the page shows the quote: all of it when it fits the pane, else as
    much of its first line as a pane this wide can show once its left edge is in view."""
    if area.width() <= visible.width() and area.height() <= visible.height():
        return visible.contains(area)
    start = QRectF(area.left(), area.top(), min(area.width(), visible.width() - _MARGIN_PX), min(area.height(), 24.0))
    return visible.contains(start)
