"""The viewer in the main window at common sizes: a paper opens fitted to the pane's width (nothing
cut off to the side), and a citation brings its whole quote into view."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from PySide6.QtCore import QRectF
from pytestqt.qtbot import QtBot

from engine.types import PageRect, Rect
from ui.engine_client import EngineClient
from ui.main_window import MainWindow
from ui.quote_view import READABLE_ZOOM, shows_quote, zoom_for_quote

LINE = "Retrieval systems should cite the exact passages that they rely on, with pages."


def _two_column_paper(path: Path) -> tuple[Path, list[PageRect]]:
    """A page with a left and a right column of 10-pt text; the boxes of the right column's lines."""
    document = pymupdf.open()
    page = document.new_page()  # 612 x 792 points
    lines = [LINE[:40], LINE[40:]] * 20
    page.insert_text((54, 90), lines, fontsize=10, lineheight=1.4)
    page.insert_text((320, 90), lines, fontsize=10, lineheight=1.4)
    right = [PageRect(1, Rect(*word_line)) for word_line in _line_boxes(page, 320)]
    document.save(path)
    document.close()
    return path, right


def _line_boxes(page: pymupdf.Page, left: float) -> list[tuple[float, float, float, float]]:
    boxes: dict[float, list[float]] = {}
    for x0, y0, x1, y1, *_ in page.get_text("words"):
        if x0 >= left - 1:
            box = boxes.setdefault(round(y0), [x0, y0, x1, y1])
            box[0], box[2], box[3] = min(box[0], x0), max(box[2], x1), max(box[3], y1)
    return [tuple(box) for _, box in sorted(boxes.items())]  # type: ignore[misc]


@pytest.mark.parametrize(("width", "height"), [(1024, 700), (1366, 768), (1920, 1080)])
def test_a_citation_shows_its_whole_quote_and_a_paper_opens_fitted_to_the_width(
        qtbot: QtBot, window: MainWindow, client: EngineClient, tmp_path: Path, width: int, height: int) -> None:
    qtbot.waitUntil(lambda: not client.busy, timeout=60_000)
    paper, right_column = _two_column_paper(tmp_path / "two-columns.pdf")
    window.resize(width, height)
    qtbot.waitUntil(lambda: window.size().width() == width, timeout=5_000)
    qtbot.waitUntil(lambda: window.viewer.width() > 200, timeout=5_000)
    viewer, bars = window.viewer, window.viewer.scroll_area

    passage, quote = right_column[10:18], right_column[12:16]  # a quote in the right-hand column
    assert viewer.show_passage(str(paper), 1, passage, quote, title="Two columns")
    qtbot.waitUntil(viewer.quote_in_view, timeout=2_000)
    area = viewer.highlight_area()
    assert area is not None
    visible = QRectF(bars.horizontalScrollBar().value(), bars.verticalScrollBar().value(),
                     bars.viewport().width(), bars.viewport().height())
    assert visible.contains(area), f"the quote {area} is cut by the view {visible} at {width}x{height}"

    assert viewer.open_document(str(paper), title="Two columns")  # double-click in the library
    qtbot.wait(0)
    assert bars.horizontalScrollBar().value() == 0
    assert bars.horizontalScrollBar().maximum() == 0, f"the page is wider than the pane at {width}x{height}"
    assert viewer.canvas.width() >= bars.viewport().width() - 40  # fitted, not merely small


def test_the_zoom_keeps_the_column_readable_unless_the_quote_would_not_fit() -> None:
    column = [Rect(320, 100 + 14 * n, 560, 110 + 14 * n) for n in range(10)]  # 240 pt wide
    quote = column[2:5]
    # A wide pane: the column fills it at a readable size.
    assert zoom_for_quote(520, 700, 612, column, quote) == pytest.approx((520 - 16) / (240 + 24))
    # A narrow pane (1024-pixel window): the whole quote fits instead, above the page-width zoom.
    narrow = zoom_for_quote(288, 600, 612, column, quote)
    assert narrow < READABLE_ZOOM[0] and narrow * (240 + 24) <= 288 - 16 + 1e-6 and narrow >= 288 / 612
    assert zoom_for_quote(288, 600, 612, [], []) == pytest.approx(288 / 612)


def test_a_quote_is_in_view_only_when_all_of_it_is_if_it_can_be() -> None:
    visible = QRectF(100, 0, 300, 500)
    assert shows_quote(visible, QRectF(120, 50, 250, 60))
    assert not shows_quote(visible, QRectF(120, 50, 290, 60))  # its right part is cut
    assert shows_quote(visible, QRectF(108, 50, 900, 60))  # wider than the pane: its start is shown


@pytest.mark.parametrize(("width", "height"), [(1024, 700), (1366, 768)])
def test_the_whole_quote_stays_in_view_when_the_pane_shrinks_after_the_citation(
        qtbot: QtBot, window: MainWindow, client: EngineClient, tmp_path: Path, width: int, height: int) -> None:
    """The citation was shown while the window still had its first, larger layout; the pane then took its
    size at 1024x700 and the quote was cut until the citation was clicked again."""
    qtbot.waitUntil(lambda: not client.busy, timeout=60_000)
    paper, right_column = _two_column_paper(tmp_path / "two-columns.pdf")
    window.resize(1920, 1080)
    qtbot.waitUntil(lambda: window.viewer.width() > 400, timeout=5_000)
    viewer, bars = window.viewer, window.viewer.scroll_area
    assert viewer.show_passage(str(paper), 1, right_column[4:30], right_column[8:16], title="Two columns")
    window.resize(width, height)
    qtbot.waitUntil(lambda: window.size().width() == width, timeout=5_000)

    def whole_quote_shown() -> bool:
        area = viewer.highlight_area()
        visible = QRectF(bars.horizontalScrollBar().value(), bars.verticalScrollBar().value(),
                         bars.viewport().width(), bars.viewport().height())
        return area is not None and visible.contains(area)

    qtbot.waitUntil(whole_quote_shown, timeout=3_000)
