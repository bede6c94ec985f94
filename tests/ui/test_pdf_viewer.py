"""The PDF viewer on real papers: rendering, navigation, zoom, selection and copy, stored highlights."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication, QTextDocument
from pytestqt.qtbot import QtBot

from engine.service import Engine
from engine.types import PageRect, Rect
from ui.pdf_viewer import PdfViewer
from ui.record_view import record_html

PAPER = "N18-3011.pdf"


@pytest.fixture(scope="module")
def stored_passage(tmp_path_factory: pytest.TempPathFactory, corpus_papers: Path):
    """A real passage of a real paper, as the engine stored it (rectangles, words)."""
    with Engine(tmp_path_factory.mktemp("viewer") / "home") as engine:
        list(engine.add_documents([corpus_papers / PAPER]))
        document = engine.documents()[0]
        passages = [p for p in engine.passages(document.id) if p.page_start >= 2 and not p.is_reference]
        return document, passages[0]


def test_a_page_renders_and_navigation_and_zoom_work(qtbot: QtBot, viewer: PdfViewer, corpus_papers: Path) -> None:
    assert viewer.open_document(str(corpus_papers / PAPER), page=2)
    assert viewer.current_page == 2 and viewer.page_count >= 5
    assert viewer.stack.currentWidget() is viewer.scroll_area
    assert viewer.canvas.width() > 300 and viewer.canvas.height() > 400
    rendered = viewer.canvas.grab().toImage()
    sampled = {rendered.pixel(x, y) for x in range(0, rendered.width(), 7) for y in range(0, rendered.height(), 7)}
    assert len(sampled) > 2  # text, not a blank page

    viewer.next_action.trigger()
    assert viewer.current_page == 3 and viewer.page_box.value() == 3
    viewer.page_box.setValue(1)
    assert viewer.current_page == 1 and not viewer.previous_action.isEnabled()
    viewer.go_to_page(10_000)
    assert viewer.current_page == viewer.page_count and not viewer.next_action.isEnabled()

    viewer.set_zoom(1.0)
    width_at_100 = viewer.canvas.width()
    viewer.zoom_in_action.trigger()
    assert viewer.zoom == 1.25 and viewer.canvas.width() == pytest.approx(width_at_100 * 1.25, abs=2)
    assert viewer.zoom_label.text() == "125 %"


def test_a_stored_passage_is_highlighted_with_its_exact_rectangles(viewer: PdfViewer, stored_passage) -> None:
    document, passage = stored_passage
    quote_rects = passage.rects_for_span(0, 60)

    assert viewer.show_passage(document.path, passage.page_start, passage.rects, quote_rects)

    assert viewer.current_page == passage.page_start
    assert viewer.highlight_rects == passage.rects
    drawn_passage, drawn_quote = viewer.visible_highlights()
    assert drawn_passage == [rect for page, rect in passage.rects if page == passage.page_start]
    assert drawn_quote == [rect for page, rect in quote_rects if page == passage.page_start]
    assert drawn_quote and len(drawn_quote) < len(drawn_passage)
    # The quote is painted more strongly than the rest of the passage.
    image = viewer.canvas.grab().toImage()
    ratio = image.devicePixelRatio()
    quote_box = viewer.canvas.widget_rect(drawn_quote[0])
    other = viewer.canvas.widget_rect(drawn_passage[-1])
    quote_pixel = image.pixelColor(int(quote_box.left() * ratio + 2), int(quote_box.center().y() * ratio))
    other_pixel = image.pixelColor(int(other.left() * ratio + 2), int(other.center().y() * ratio))
    assert quote_pixel.blue() < other_pixel.blue() < 250  # orange under the quote, pale yellow elsewhere


def test_a_citation_opens_at_a_readable_zoom_centred_on_the_quote_with_the_title(
        qtbot: QtBot, viewer: PdfViewer, stored_passage) -> None:
    document, passage = stored_passage
    viewer.resize(520, 760)  # the pane's size in a 1366-pixel window
    quote_rects = passage.rects_for_span(0, 60)
    assert viewer.show_passage(document.path, passage.page_start, passage.rects, quote_rects, title=document.bib.title)
    assert viewer.zoom >= 1.2  # was ~0.82: the whole page at 7-pixel text
    assert viewer.title_label.isVisible() and viewer.title_label.full_text == document.bib.title
    quote = viewer.canvas.widget_rect(viewer.visible_highlights()[1][0])
    shown = viewer.scroll_area.viewport().rect().translated(viewer.scroll_area.horizontalScrollBar().value(),
                                                            viewer.scroll_area.verticalScrollBar().value())
    assert shown.contains(quote.center().toPoint())  # the quote is on screen
    assert abs(quote.center().y() - shown.center().y()) < shown.height() / 3

    viewer.fit_action.trigger()  # Fit width: the whole width, no horizontal scroll bar
    qtbot.wait(50)
    assert viewer.scroll_area.horizontalScrollBar().maximum() == 0
    assert viewer.canvas.width() >= viewer.scroll_area.viewport().width() - 40


def test_dragging_over_words_selects_and_copies_them(qtbot: QtBot, viewer: PdfViewer, stored_passage) -> None:
    document, passage = stored_passage
    viewer.show_passage(document.path, passage.page_start, passage.rects)
    first_line = viewer.canvas.widget_rect(viewer.visible_highlights()[0][0])
    start = QPoint(int(first_line.left()) + 2, int(first_line.center().y()))
    end = QPoint(int(first_line.right()) - 2, int(first_line.center().y()))

    qtbot.mousePress(viewer.canvas, Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(viewer.canvas, end)
    qtbot.mouseRelease(viewer.canvas, Qt.MouseButton.LeftButton, pos=end)
    viewer.copy_action.trigger()

    selected = viewer.selected_text()
    assert selected and len(selected.split()) >= 3
    assert " ".join(selected.split()[:2]) in " ".join(passage.text.split())
    assert QGuiApplication.clipboard().text() == selected
    assert viewer.canvas.selection_rects


def test_a_missing_file_is_reported_not_raised(qtbot: QtBot, viewer: PdfViewer, tmp_path: Path) -> None:
    with qtbot.waitSignal(viewer.failed) as failed:
        assert not viewer.open_document(str(tmp_path / "moved-away.pdf"))
    assert "moved-away.pdf" in failed.args[0] and "add it again" in failed.args[0]


def test_a_datastore_record_shows_its_text_and_metadata_as_plain_text(viewer: PdfViewer) -> None:
    title = "Attack <script>alert(1)</script> <b>bold</b>"
    text = "We evaluate <img src=x onerror=alert(1)> on SciREX. The dataset has 438 papers."
    viewer.show_record(title, text, authors=("A. <i>Author</i>",), year=2020, source="cs-sample",
                       url="https://example.org/paper", quote="The dataset has 438 papers.")

    assert viewer.stack.currentWidget() is viewer.record_view
    shown = viewer.record_view.toPlainText()
    assert title in shown and text in shown and "A. <i>Author</i>" in shown and "https://example.org/paper" in shown
    markup = record_html(title, text, url="javascript:alert(1)")
    assert "<script>" not in markup and "javascript:" not in markup
    rendered = QTextDocument()
    rendered.setHtml(markup)
    assert title in rendered.toPlainText()


def test_highlights_on_another_page_are_drawn_only_there(viewer: PdfViewer, corpus_papers: Path) -> None:
    rects = (PageRect(1, Rect(72, 100, 300, 112)), PageRect(2, Rect(72, 200, 300, 212)))
    viewer.show_passage(str(corpus_papers / PAPER), 1, rects)
    assert viewer.visible_highlights()[0] == [rects[0].rect]
    viewer.go_to_page(2)
    assert viewer.visible_highlights()[0] == [rects[1].rect]


@pytest.mark.parametrize("width", [300, 420, 700, 1000])
def test_the_highlighted_quote_is_in_view_at_any_pane_width(qtbot: QtBot, viewer: PdfViewer, stored_passage,
                                                            width: int) -> None:
    document, passage = stored_passage
    viewer.resize(width, 700)
    qtbot.waitUntil(lambda: viewer.width() == width, timeout=5_000)
    quote_rects = passage.rects_for_span(0, 60)
    assert viewer.show_passage(document.path, passage.page_start, passage.rects, quote_rects)
    qtbot.waitUntil(viewer.quote_in_view, timeout=2_000)
    qtbot.wait(50)  # the scroll ranges settle after the layout runs: it must stay in view
    assert viewer.quote_in_view()

    viewer.resize(max(240, width // 2), 700)  # the pane narrowed after the citation opened
    qtbot.waitUntil(viewer.quote_in_view, timeout=2_000)
