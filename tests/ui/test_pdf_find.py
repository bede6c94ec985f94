"""Find in the open paper (Ctrl+F): matches in page order, next and previous wrap round, the match is
highlighted on its page, and closing puts back the citation highlight that was shown before."""

from __future__ import annotations

import pymupdf
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from pytestqt.qtbot import QtBot

from engine.demo import demo_papers
from engine.types import PageRect, Rect
from ui.main_window import MainWindow
from ui.pdf_find import find_matches
from ui.pdf_viewer import PdfViewer

PAPER = next(p for p in demo_papers() if p.name == "N18-3011.pdf")  # "Construction of the Literature Graph ..."


def test_every_match_is_where_the_page_says_the_word() -> None:
    with pymupdf.open(PAPER) as document:
        matches = find_matches(document, "  Citation ")  # case and outer spaces do not matter
        pages = [match[0].page for match in matches]
        assert len(set(pages)) >= 3 and pages == sorted(pages)
        for match in matches:  # a word hyphenated over two lines is found by its first part ("cita-")
            text = "".join(document[place.page - 1].get_textbox(pymupdf.Rect(*place.rect)) for place in match)
            assert "cita" in "".join(ch for ch in text.lower() if ch.isalpha())
        phrase = find_matches(document, "Literature Graph in Semantic Scholar")
        assert len(phrase) == 1 and phrase[0][0].page == 1  # the title, on one line or two
        assert find_matches(document, "zzqx no such words") == [] and find_matches(document, "   ") == []
        assert len(find_matches(document, "the", limit=5)) == 5


def test_enter_steps_through_matches_across_pages_and_wraps(qtbot: QtBot, viewer: PdfViewer) -> None:
    assert viewer.open_document(str(PAPER))
    viewer.start_find()
    bar = viewer.find_bar
    assert bar.isVisible() and bar.edit.hasFocus()
    qtbot.keyClicks(bar.edit, "citation")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    total = len(bar.matches)
    first = bar.matches[0]
    assert bar.count_label.text() == f"1 of {total}" and viewer.current_page == first[0].page
    assert viewer.quote_rects == first
    drawn_all, drawn_current = viewer.visible_highlights()
    assert drawn_current == [place.rect for place in first] and set(drawn_current) <= set(drawn_all)
    for _ in range(total - 1):
        qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    assert viewer.current_page == bar.matches[-1][0].page and bar.count_label.text() == f"{total} of {total}"
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)  # past the last: back to the first
    assert bar.current == 0 and viewer.current_page == first[0].page
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)  # and back again
    assert bar.current == total - 1


def test_no_match_is_said_and_escape_restores_the_citation_highlight(qtbot: QtBot, viewer: PdfViewer) -> None:
    cited = (PageRect(2, Rect(72.0, 100.0, 300.0, 140.0)),)
    assert viewer.show_passage(str(PAPER), 2, cited, cited)
    viewer.start_find()
    qtbot.keyClicks(viewer.find_bar.edit, "zzqx no such words")
    qtbot.keyClick(viewer.find_bar.edit, Qt.Key.Key_Return)
    assert viewer.find_bar.count_label.text() == "No matches"
    viewer.find_bar.edit.clear()
    qtbot.keyClicks(viewer.find_bar.edit, "graph")
    qtbot.keyClick(viewer.find_bar.edit, Qt.Key.Key_Return)
    assert viewer.quote_rects != cited
    qtbot.keyClick(viewer.find_bar.edit, Qt.Key.Key_Escape)
    assert not viewer.find_bar.isVisible()
    assert viewer.highlight_rects == cited and viewer.quote_rects == cited


def test_opening_another_passage_closes_the_find_row(qtbot: QtBot, viewer: PdfViewer) -> None:
    assert viewer.open_document(str(PAPER))
    viewer.start_find()
    qtbot.keyClicks(viewer.find_bar.edit, "graph")
    qtbot.keyClick(viewer.find_bar.edit, Qt.Key.Key_Return)
    other = (PageRect(3, Rect(72.0, 100.0, 300.0, 140.0)),)
    assert viewer.show_passage(str(PAPER), 3, other, other)
    assert not viewer.find_bar.isVisible() and viewer.find_bar.matches == []
    assert viewer.quote_rects == other  # the new citation's highlight stays


def test_find_without_a_paper_says_so(qtbot: QtBot, viewer: PdfViewer) -> None:
    viewer.start_find()
    qtbot.keyClicks(viewer.find_bar.edit, "graph")
    qtbot.keyClick(viewer.find_bar.edit, Qt.Key.Key_Return)
    assert viewer.find_bar.count_label.text() == "Open a paper first"
    # A datastore record shown over a paper opened earlier: that hidden paper is not searched.
    assert viewer.open_document(str(PAPER))
    viewer.show_record("A datastore paper", "Its passage text about a literature graph.")
    viewer.start_find()
    qtbot.keyClick(viewer.find_bar.edit, Qt.Key.Key_Return)
    assert viewer.find_bar.count_label.text() == "Open a paper first" and viewer.find_bar.matches == []


def test_ctrl_f_in_the_window_opens_the_find_row_and_is_listed_in_the_shortcuts(
        qtbot: QtBot, window: MainWindow) -> None:
    from ui.help_menu import shortcuts_text

    window.show()
    qtbot.waitExposed(window)
    assert window.viewer.open_document(str(PAPER))
    assert window.find_action.shortcut().matches(QKeySequence(QKeySequence.StandardKey.Find)) \
        == QKeySequence.SequenceMatch.ExactMatch
    window.find_action.trigger()
    assert window.viewer.find_bar.isVisible() and window.viewer.find_bar.edit.hasFocus()
    assert "Find in Paper" in shortcuts_text([window.find_action])
    assert window.find_action in window.menuBar().actions()[1].menu().actions()  # Library › Find in Paper…
