"""Common window sizes: at 1024x700, 1366x768 and 1920x1080 every control is on screen at its full size,
tab titles and column headers are not cut, and the viewer keeps Fit width and Copy."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from engine.types import Answer, AnswerMode, AnswerSentence, Citation, Document, Reference
from ui.engine_client import EngineClient
from ui.library_model import Column
from ui.main_window import MainWindow

SIZES = [(1024, 700), (1366, 768), (1920, 1080)]


def _answer() -> Answer:
    reference = Reference(1, "d-0001", "d", "library", "SPECTER: Document-level Representation Learning",
                          "SPECTER embeds papers with citation-informed transformers.", page=3,
                          authors=("Arman Cohan", "Sergey Feldman", "Iz Beltagy"), year=2020)
    quote = Citation(1, "d-0001", "SPECTER embeds papers", 0, 21, 0.9)
    sentence = AnswerSentence("SPECTER embeds papers [1].", (quote,), True)
    return Answer("How does SPECTER embed papers?", sentence.text, (sentence,), (reference,), AnswerMode.WRITTEN,
                  id="a1", created_at=1.0)


def _on_screen(window: MainWindow, widget: QWidget) -> bool:
    """Visible, inside the window, and at least as wide as it asks to be (so nothing is cut)."""
    if not widget.isVisible():
        return False
    top_left = widget.mapTo(window, widget.rect().topLeft())
    area = QRect(top_left, widget.size())
    return window.rect().contains(area) and widget.width() >= widget.minimumSizeHint().width()


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_every_control_is_reachable_at_common_window_sizes(
        qtbot: QtBot, window: MainWindow, client: EngineClient, titled_pdf: Callable[[str], Path], width: int,
        height: int) -> None:
    title = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"
    paper = titled_pdf(title)
    qtbot.waitUntil(lambda: not client.busy, timeout=120_000)
    # The layout is what is tested: rows as the engine would list them, without ingesting.
    window.model.set_documents([Document(id=f"{n:064x}", content_hash=f"{n:064x}", path=str(paper), title=title,
                                         authors=("Arman Cohan", "Sergey Feldman"), year=2020, page_count=12,
                                         passage_count=40, added_at=float(n)) for n in range(1, 4)])
    window.answers.show(_answer())
    assert window.viewer.open_document(str(paper), title="SPECTER")
    window.resize(width, height)
    qtbot.waitUntil(lambda: window.size().width() == width, timeout=5_000)
    qtbot.wait(120)  # the viewer refits after a resize settles

    pane, viewer = window.ask_pane, window.viewer
    controls: list[QWidget] = [pane.question_box, pane.scope_box, pane.write_box, pane.ask_button, pane.copy_button,
                               pane.markdown_button, pane.bibtex_button, window.library.filter_box, window.table,
                               viewer.page_box, viewer.title_label, *viewer.toolbar_buttons]
    cut = [widget.accessibleName() or widget.objectName() or type(widget).__name__
           for widget in controls if not _on_screen(window, widget)]
    assert cut == [], f"cut or hidden at {width}x{height}: {cut}"
    texts = {button.text() for button in viewer.toolbar_buttons}
    assert {"Fit width", "Copy"} <= texts

    bar = pane.tabs.tabBar()
    for index in range(bar.count()):  # "Past questions", never "Past que…"
        needed = bar.fontMetrics().horizontalAdvance(bar.tabText(index))
        assert bar.tabRect(index).width() >= needed, bar.tabText(index)
    header = window.table.horizontalHeader()
    for column in Column:
        assert not header.isSectionHidden(column) and header.sectionSize(column) >= 36, column
    title_width = header.sectionSize(Column.TITLE)
    wanted = 80 if width < 1366 else 200  # ~12 characters in the smallest window, ~28 from 1366 px up
    assert title_width >= wanted, f"titles get only {title_width} px at {width}x{height}"
