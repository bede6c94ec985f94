"""The main window end to end: real PDFs dropped on it go through the EngineClient into a real engine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPointF, QSettings, QSize, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QKeySequence, QTextDocument
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from engine.service import Engine
from ui.empty_state import HEADLINE
from ui.engine_client import EngineClient
from ui.engine_worker import PAPER_GONE
from ui.library_model import Column
from ui.main_window import MainWindow

PAPERS = {
    "N18-3011.pdf": "Construction of the Literature Graph in Semantic Scholar",
    "P14-1059.pdf": "How to make words with vectors: Phrase generation in distributional semantics",
}
INGEST_TIMEOUT_MS = 60_000


def drop_files(window: MainWindow, paths: list[Path]) -> tuple[bool, bool]:
    """Drag ``paths`` over the middle of the window and drop them, as a file manager would.

    The events go to the native window, so Qt routes them to whichever widget is under the
    cursor and up its parents: the test fails if a child widget swallows drops. Returns
    whether the drag was accepted and whether the drop was.
    """
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path)) for path in paths])
    actions = Qt.DropAction.CopyAction | Qt.DropAction.MoveAction
    centre = QPointF(window.centralWidget().geometry().center())
    enter = drag_enter_event(centre, actions, mime)
    QApplication.sendEvent(window.windowHandle(), enter)
    drop = QDropEvent(centre, actions, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window.windowHandle(), drop)
    return enter.isAccepted(), drop.isAccepted()


def drag_enter_event(position: QPointF, actions: Qt.DropAction, mime: QMimeData) -> QDragEnterEvent:
    buttons, modifiers = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    try:
        return QDragEnterEvent(position, actions, mime, buttons, modifiers)
    except TypeError:  # PySide6 before the QPointF overload (deprecated QPoint form since)
        return QDragEnterEvent(position.toPoint(), actions, mime, buttons, modifiers)


def shown_titles(window: MainWindow) -> list[str]:
    view_model = window.table.model()
    return [view_model.index(row, Column.TITLE).data() for row in range(view_model.rowCount())]


def focus_library(qtbot: QtBot, window: MainWindow) -> None:
    """Make the window active, as a user's would be, so its keyboard shortcuts apply."""
    window.activateWindow()
    qtbot.waitActive(window)


def wait_idle(qtbot: QtBot, client: EngineClient) -> None:
    qtbot.waitUntil(lambda: not client.busy, timeout=INGEST_TIMEOUT_MS)


def test_an_empty_library_invites_dropping_pdfs(qtbot: QtBot, window: MainWindow, client: EngineClient) -> None:
    wait_idle(qtbot, client)  # the window's first refresh has answered: the library really is empty
    assert window.stack.currentWidget() is window.empty_state
    assert window.empty_state.headline.text() == HEADLINE == "Drop PDFs here"
    assert window.empty_state.headline.textFormat() == Qt.TextFormat.PlainText
    assert window.acceptDrops()
    assert not window.ingest_progress.isVisible()
    assert not window.remove_action.isEnabled()
    assert not window.cancel_action.isEnabled()


def test_dropped_pdfs_are_ingested_listed_and_one_removed(qtbot: QtBot, window: MainWindow, client: EngineClient,
                                                         corpus_papers: Path, confirmations: Any) -> None:
    entered, dropped = drop_files(window, [corpus_papers / name for name in PAPERS])

    assert entered and dropped
    assert client.ingesting
    assert window.ingest_progress.isVisible() and window.cancel_action.isEnabled()
    qtbot.waitUntil(lambda: window.model.rowCount() == 2, timeout=INGEST_TIMEOUT_MS)
    assert sorted(shown_titles(window)) == sorted(PAPERS.values())
    assert window.stack.currentWidget() is window.table
    qtbot.waitUntil(lambda: not client.ingesting, timeout=INGEST_TIMEOUT_MS)
    assert not window.ingest_progress.isVisible() and not window.cancel_action.isEnabled()
    assert window.statusBar().currentMessage() == "Added 2 papers."

    focus_library(qtbot, window)
    window.table.selectRow(shown_titles(window).index(PAPERS["N18-3011.pdf"]))
    assert window.remove_action.isEnabled()
    confirmations.answer = False  # Delete asks first; Cancel keeps the paper
    qtbot.keyClick(window.table, Qt.Key.Key_Delete)
    assert confirmations.asked == [f"Remove “{PAPERS['N18-3011.pdf']}” from the library?"]
    wait_idle(qtbot, client)
    assert window.model.rowCount() == 2
    confirmations.answer = True
    qtbot.keyClick(window.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: window.model.rowCount() == 1, timeout=INGEST_TIMEOUT_MS)
    assert not window.remove_action.isEnabled()  # nothing selected: a second Delete removes nothing
    assert shown_titles(window) == [PAPERS["P14-1059.pdf"]]
    wait_idle(qtbot, client)
    with Engine(client.home) as engine:  # the library itself changed, not only the table
        assert [document.bib.title for document in engine.documents()] == [PAPERS["P14-1059.pdf"]]


def test_a_file_that_is_not_a_pdf_is_reported_through_the_error_dialog(
        qtbot: QtBot, window: MainWindow, client: EngineClient, tmp_path: Path, shown_errors: list[str]) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Reading list: plain text, not a paper.\n", encoding="utf-8")

    drop_files(window, [notes])

    qtbot.waitUntil(lambda: len(shown_errors) == 1, timeout=INGEST_TIMEOUT_MS)
    assert "notes.txt" in shown_errors[0] and "not a PDF" in shown_errors[0]
    shown_errors.clear()
    # The failure is also in the library, with its reason where the user hovers.
    qtbot.waitUntil(lambda: window.model.rowCount() == 1, timeout=INGEST_TIMEOUT_MS)
    status = window.table.model().index(0, Column.STATUS)
    assert status.data() == "Failed"
    assert "not a PDF" in status.data(Qt.ItemDataRole.ToolTipRole)
    assert window.table.model().index(0, Column.TITLE).data() == "notes.txt"


def test_removing_a_paper_that_is_gone_says_so_in_the_apps_words(
        qtbot: QtBot, window: MainWindow, client: EngineClient, shown_errors: list[str]) -> None:
    with qtbot.waitSignal(client.error, timeout=INGEST_TIMEOUT_MS) as raised:
        client.remove("ffffffffffffffff")

    assert raised.args[0] == PAPER_GONE and "quire library list" not in raised.args[0]
    assert shown_errors == [PAPER_GONE]
    shown_errors.clear()
    wait_idle(qtbot, client)


def test_an_engine_exception_reaches_the_error_dialog_with_the_engines_message(
        qtbot: QtBot, window: MainWindow, client: EngineClient, shown_errors: list[str]) -> None:
    with qtbot.waitSignal(client.error, timeout=INGEST_TIMEOUT_MS) as raised:
        client.load_answer("ffffffffffffffff", lambda _: None)

    assert "No saved answer has the id 'ffffffffffffffff'" in raised.args[0]
    assert shown_errors == [raised.args[0]]
    shown_errors.clear()
    wait_idle(qtbot, client)
    assert not client.busy


def test_a_title_with_markup_is_shown_as_plain_text(qtbot: QtBot, window: MainWindow,
                                                    titled_pdf: Callable[[str], Path]) -> None:
    title = "Hostile <b>x</b><script> Title"
    window.add_paths([titled_pdf(title)])

    qtbot.waitUntil(lambda: window.model.rowCount() == 1, timeout=INGEST_TIMEOUT_MS)
    cell = window.table.model().index(0, Column.TITLE)
    assert cell.data() == title
    tooltip = cell.data(Qt.ItemDataRole.ToolTipRole)
    assert "<b>x</b>" not in tooltip
    rendered = QTextDocument()
    rendered.setHtml(tooltip)  # what Qt's tooltip shows: the title as typed, tags and all
    assert title in rendered.toPlainText()


def test_cancel_stops_a_batch_and_keeps_the_window_usable(qtbot: QtBot, window: MainWindow, client: EngineClient,
                                                          corpus_papers: Path) -> None:
    total = len(list(corpus_papers.glob("*.pdf")))
    focus_library(qtbot, window)
    drop_files(window, [corpus_papers])

    with qtbot.waitSignal(client.cancelled, timeout=INGEST_TIMEOUT_MS) as cancelled:
        qtbot.keyClick(window.focusWidget() or window, Qt.Key.Key_Escape)

    assert "Cancelled" in cancelled.args[0]
    qtbot.waitUntil(lambda: not client.ingesting, timeout=INGEST_TIMEOUT_MS)
    assert window.model.rowCount() < total
    assert not window.ingest_progress.isVisible()
    assert window.statusBar().currentMessage() == cancelled.args[0]


def test_window_geometry_is_remembered(qtbot: QtBot, client: EngineClient, window_settings: QSettings,
                                       shown_errors: list[str]) -> None:
    first = MainWindow(client, window_settings)
    qtbot.addWidget(first)
    first.resize(760, 560)  # above the window's minimum, within the 800x800 offscreen screen
    first.show()
    first.close()

    second = MainWindow(client, window_settings)
    qtbot.addWidget(second)
    assert second.size() == QSize(760, 560)


def test_controls_have_accessible_names(window: MainWindow) -> None:
    named = {widget.accessibleName() for widget in window.findChildren(QWidget) if widget.accessibleName()}
    assert {"Library", "Filter papers", "Paper details", "Question", "Scope", "Ask", "Answer", "Past questions",
            "Cancel the answer", "PDF viewer", "Page number", "Zoom level"} <= named
    assert window.ask_action.shortcuts() == [QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")]
    assert window.cancel_action.shortcut() == QKeySequence(Qt.Key.Key_Escape)
    assert window.table.accessibleName() == "Library"
    assert window.empty_state.add_button.accessibleName() == "Add PDFs"
    progress = window.ingest_progress
    assert {child.accessibleName() for child in progress.children() if hasattr(child, "accessibleName")} >= {
        "Ingestion status", "Ingestion progress", "Cancel adding papers"}
    assert window.add_files_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Open)


def test_drops_without_local_files_are_refused(window: MainWindow) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl("https://example.org/paper.pdf")])
    enter = drag_enter_event(QPointF(10, 10), Qt.DropAction.CopyAction, mime)
    QApplication.sendEvent(window, enter)
    assert not enter.isAccepted()


def test_new_papers_show_embedding_until_their_passages_are_embedded(
        qtbot: QtBot, window: MainWindow, client: EngineClient, corpus_papers: Path) -> None:
    window.add_paths([corpus_papers / "N18-3011.pdf"])
    qtbot.waitUntil(lambda: window.model.rowCount() == 1, timeout=INGEST_TIMEOUT_MS)
    status = window.table.model().index(0, Column.STATUS)
    assert status.data() == "Embedding…"  # searchable by keyword already, by meaning once embedded
    qtbot.waitUntil(lambda: status.data() == "Indexed", timeout=INGEST_TIMEOUT_MS)
    wait_idle(qtbot, client)
    with Engine(client.home) as engine:
        assert engine.library_source.pending_count() == 0
    assert not window.embedding_status.isVisible()


def test_the_demo_adds_only_papers_unless_the_datastore_is_ticked(
        qtbot: QtBot, window: MainWindow, client: EngineClient) -> None:
    wait_idle(qtbot, client)
    assert window.empty_state.demo_button.isVisible()
    assert not window.empty_state.demo_datastore_box.isChecked()  # opt-in: it joins every "Everything" answer
    qtbot.mouseClick(window.empty_state.demo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.model.rowCount() == 4 and not client.ingesting, timeout=INGEST_TIMEOUT_MS)
    assert client._pending["datastore"] == 0  # nothing was queued to attach it
    with Engine(client.home) as engine:
        assert engine.datastores() == []
    assert not window.library.datastores_label.isVisibleTo(window)


@pytest.mark.slow
def test_the_demo_attaches_the_sample_datastore_when_ticked(
        qtbot: QtBot, window: MainWindow, client: EngineClient) -> None:
    wait_idle(qtbot, client)
    window.empty_state.demo_datastore_box.setChecked(True)
    qtbot.mouseClick(window.empty_state.demo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.model.rowCount() == 4, timeout=INGEST_TIMEOUT_MS)
    qtbot.waitUntil(lambda: window.library.datastores_label.isVisibleTo(window), timeout=300_000)
    assert window.library.datastores_label.text() == "Datastores: cs-sample (3,529 papers)"


def test_the_filter_narrows_the_library_and_the_layout_is_remembered(
        qtbot: QtBot, window: MainWindow, client: EngineClient, window_settings: QSettings,
        titled_pdf: Callable[[str], Path]) -> None:
    window.add_paths([titled_pdf("Dense retrieval for science"), titled_pdf("Sparse indexes at scale")])
    qtbot.waitUntil(lambda: window.model.rowCount() == 2, timeout=INGEST_TIMEOUT_MS)
    window.library.filter_box.setText("DENSE")
    assert shown_titles(window) == ["Dense retrieval for science"]
    window.library.filter_box.setText("zebrafish")
    assert shown_titles(window) == [] and window.library.no_match_label.isVisible()
    assert "zebrafish" in window.library.no_match_label.text()
    window.library.filter_box.clear()
    assert len(shown_titles(window)) == 2 and not window.library.no_match_label.isVisible()

    window.resize(780, 560)  # within the offscreen screen, so the geometry is restored as it was
    window.splitter.setSizes([200, 250, 320])
    sizes = window.splitter.sizes()
    window.close()
    again = MainWindow(client, window_settings)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    assert again.splitter.sizes() == sizes
