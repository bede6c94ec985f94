"""A quire:// link opens the viewer at its page with the quote's boxes lit; a bad link says what is wrong.

The paper is a real PDF made with PyMuPDF and indexed by the real engine; the link is the one
``engine.links`` makes for answers, exports and MCP results.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from engine.links import open_link
from engine.service import Engine
from engine.types import Passage
from ui.engine_client import EngineClient
from ui.main_window import MainWindow

TOPICS = ("citation graphs", "dense retrieval", "support judges")


def three_page_paper(path: Path) -> Path:
    """Three pages of distinct sentences, one topic per page; passages run over page ends."""
    document = pymupdf.open()
    for number, topic in enumerate(TOPICS, start=1):
        page = document.new_page()
        if number == 1:
            page.insert_text((72, 60), "Links to cited pages", fontsize=20)
        lines = [f"Page {number} line {line}: studies of {topic} report finding {line * number} here."
                 for line in range(24)]
        page.insert_text((72, 100), lines, fontsize=10, lineheight=1.5)
    document.set_metadata({"title": "Links to cited pages"})
    document.save(path)
    document.close()
    return path


@pytest.fixture
def link_window(qtbot: QtBot, client: EngineClient, window_settings: QSettings,
                shown_errors: list[str]) -> Iterator[MainWindow]:
    window = MainWindow(client, window_settings, progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    yield window


def indexed_paper(qtbot: QtBot, window: MainWindow, client: EngineClient, tmp_path: Path) -> tuple[Path, str]:
    paper = three_page_paper(tmp_path / "links.pdf")
    window.add_paths([paper])
    qtbot.waitUntil(lambda: window.model.rowCount() == 1 and not client.busy, timeout=120_000)
    return paper, window.model.document(0).id


def passage_with(home: Path, doc_id: str, quote: str) -> Passage:
    reader = Engine(home)
    try:
        return next(p for p in reader.passages(doc_id) if quote in p.text)
    finally:
        reader.close()


def text_in(pdf: Path, page: int, rects: list[pymupdf.Rect]) -> str:
    with pymupdf.open(pdf) as document:
        return " ".join(document[page - 1].get_textbox(rect) for rect in rects)


def test_a_link_opens_the_viewer_at_its_page_with_the_quotes_boxes(
        qtbot: QtBot, link_window: MainWindow, client: EngineClient, tmp_path: Path) -> None:
    paper, doc_id = indexed_paper(qtbot, link_window, client, tmp_path)
    quote = "Page 2 line 7: studies of dense retrieval report finding 14 here."
    passage = passage_with(client.home, doc_id, quote)
    assert (passage.page_start, passage.page_end) == (1, 2), "the passage starts on page 1, its quote is on 2"
    start = passage.text.index(quote)

    link_window.open_links([open_link(doc_id, 2, passage.id, quote)])
    viewer = link_window.viewer
    qtbot.waitUntil(lambda: viewer.path == str(paper) and bool(viewer.quote_rects), timeout=30_000)

    assert viewer.current_page == 2
    assert viewer.quote_rects == passage.rects_for_span(start, start + len(quote))
    assert viewer.highlight_rects == passage.rects
    assert {page for page, _ in viewer.quote_rects} == {2}
    # The boxes lit are the quote's own words on the page, not a neighbouring line.
    lit = text_in(paper, 2, [pymupdf.Rect(r.x0, r.y0, r.x1, r.y1) for _, r in viewer.quote_rects])
    assert " ".join(lit.split()) == quote
    _, quotes_drawn = viewer.visible_highlights()
    assert quotes_drawn, "the quote is drawn on the page shown"
    assert "Links to cited pages, page 2" in link_window.statusBar().currentMessage()


def test_a_link_without_a_passage_opens_the_page_and_a_gone_passage_still_opens_it(
        qtbot: QtBot, link_window: MainWindow, client: EngineClient, tmp_path: Path) -> None:
    paper, doc_id = indexed_paper(qtbot, link_window, client, tmp_path)
    viewer = link_window.viewer
    link_window.open_links([open_link(doc_id, 3)])
    qtbot.waitUntil(lambda: viewer.path == str(paper) and viewer.current_page == 3, timeout=30_000)
    assert viewer.quote_rects == () and viewer.highlight_rects == ()

    link_window.open_links([open_link(doc_id, 1, f"{doc_id}-9999", "words")])
    qtbot.waitUntil(lambda: viewer.current_page == 1, timeout=30_000)
    assert "no longer in the library" in link_window.statusBar().currentMessage()


@pytest.mark.parametrize(("url", "says"), [
    ("quire://open?paper=../../etc/passwd&page=2", "is not a paper id"),
    ("https://example.org/paper.pdf", "is not a quire:// link"),
    ("quire://open?paper=faa5aceb428cdeb9&page=0", "is not a page number"),
])
def test_a_bad_link_says_what_is_wrong_and_opens_nothing(
        link_window: MainWindow, shown_errors: list[str], url: str, says: str) -> None:
    link_window.open_links([url])
    assert len(shown_errors) == 1 and "This link cannot be opened." in shown_errors[0] and says in shown_errors[0]
    assert link_window.viewer.path == ""
    shown_errors.clear()


def test_a_link_to_an_unknown_paper_or_past_the_last_page_says_so(
        qtbot: QtBot, link_window: MainWindow, client: EngineClient, tmp_path: Path,
        shown_errors: list[str]) -> None:
    _, doc_id = indexed_paper(qtbot, link_window, client, tmp_path)
    link_window.open_links([open_link("faa5aceb428cdeb9", 2)])
    qtbot.waitUntil(lambda: bool(shown_errors), timeout=30_000)
    assert "not in this library" in shown_errors[0] and str(client.home) in shown_errors[0]
    shown_errors.clear()

    link_window.open_links([open_link(doc_id, 9)])
    qtbot.waitUntil(lambda: bool(shown_errors), timeout=30_000)
    assert "page 9 of “Links to cited pages”, which has 3 pages" in shown_errors[0]
    assert link_window.viewer.path == ""
    shown_errors.clear()
