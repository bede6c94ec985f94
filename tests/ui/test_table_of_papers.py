"""The table of papers window on a real engine: a row per paper that addresses the question, the chosen
columns, a click on a cell showing its quote in the PDF, Stop keeping the finished rows, export."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from fixtures.pdfs import text_pdf
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from engine.bibliography import Bibliography
from engine.table_types import TableColumn
from ui.ask_pane import SELECTED
from ui.engine_client import EngineClient
from ui.main_window import MainWindow

TIMEOUT_MS = 300_000
QUESTION = "How are scientific document embeddings trained?"
ON_TOPIC = ("{name} trains scientific document embeddings with a contrastive loss over citations between papers.\n"
            "The training data are {size}K query papers sampled from a corpus of scholarly papers.\n"
            "Our main result is that {name} outperforms every baseline on the SciDocs benchmark.")
OFF_TOPIC = ("Sourdough bread rises because wild yeast ferments the flour and water mixture overnight.\n"
             "A longer proof gives the crumb an open structure and a sour taste that bakers prize.")


@pytest.fixture
def quiet_window(qtbot: QtBot, client: EngineClient, window_settings: QSettings,
                 shown_errors: list[str]) -> MainWindow:
    """The main window without background embedding: these tests time the table, not the embedder."""
    window = MainWindow(client, window_settings, progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.show()
    return window


def add_papers(qtbot: QtBot, window: MainWindow, client: EngineClient, tmp_path: Path, on_topic: int,
               off_topic: int = 0) -> None:
    paths = [text_pdf(tmp_path / f"paper{i}.pdf", [ON_TOPIC.format(name=f"Model{i}", size=100 + i)])
             for i in range(on_topic)]
    paths += [text_pdf(tmp_path / f"bread{i}.pdf", [OFF_TOPIC + f"\nLoaf number {i}."]) for i in range(off_topic)]
    window.add_paths(paths)
    qtbot.waitUntil(lambda: window.model.rowCount() == len(paths) and not client.busy, timeout=TIMEOUT_MS)


def build(qtbot: QtBot, window: MainWindow, client: EngineClient, columns: list[TableColumn] | None = None) -> None:
    window.ask_pane.question_box.setPlainText(QUESTION)
    if columns is not None:
        window.tables.window.set_columns(columns)
    window.table_action.trigger()
    qtbot.waitUntil(lambda: window.tables.table is not None and not client.busy, timeout=TIMEOUT_MS)


def test_the_table_has_one_row_per_addressing_paper_and_the_chosen_columns(
        qtbot: QtBot, quiet_window: MainWindow, client: EngineClient, tmp_path: Path, monkeypatch: Any) -> None:
    add_papers(qtbot, quiet_window, client, tmp_path, on_topic=2, off_topic=1)
    tables = quiet_window.tables
    tables.window.mode_box.setCurrentIndex(tables.window.mode_box.findData("quotes"))
    build(qtbot, quiet_window, client, [TableColumn("Answer", ""), TableColumn("Data", "What training data is used?")])
    model = tables.window.model
    assert model.rowCount() == 2  # the bread paper does not address the question
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())] == \
        ["Paper", "Answer", "Data"]
    assert all("training data" in str(model.data(model.index(r, 2))) for r in range(2))
    assert tables.window.csv_button.isEnabled()

    tables.window.view.clicked.emit(model.index(0, 2))  # a cell opens on its quote, highlighted
    qtbot.waitUntil(lambda: bool(quiet_window.viewer.quote_rects), timeout=TIMEOUT_MS)
    assert quiet_window.viewer.current_page == 1

    target = tmp_path / "table.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args, **kwargs: (str(target), ""))
    tables.window.csv_button.click()
    rows = list(csv.reader(io.StringIO(target.read_text(encoding="utf-8"))))
    assert rows[0] == ["paper", "authors", "year", "Answer", "Answer quote", "Answer page", "Data", "Data quote",
                       "Data page"]
    assert len(rows) == 3


def test_stop_keeps_the_finished_rows(qtbot: QtBot, quiet_window: MainWindow, client: EngineClient,
                                      tmp_path: Path) -> None:
    add_papers(qtbot, quiet_window, client, tmp_path, on_topic=12)
    tables = quiet_window.tables
    tables.window.mode_box.setCurrentIndex(tables.window.mode_box.findData("quotes"))
    client.table_row.connect(lambda _request, _row: tables.cancel())  # Stop as soon as the first row shows
    build(qtbot, quiet_window, client)
    table = tables.table
    assert table is not None and table.cancelled and 1 <= len(table.rows) < 12
    assert tables.window.model.rowCount() == len(table.rows)
    assert "finished rows are kept" in tables.window.notice_label.text()


def test_no_paper_in_scope_says_so_without_asking_the_engine(qtbot: QtBot, quiet_window: MainWindow,
                                                             client: EngineClient, tmp_path: Path) -> None:
    quiet_window.ask_pane.set_scope(SELECTED)  # and nothing is selected
    quiet_window.ask_pane.question_box.setPlainText(QUESTION)
    quiet_window.table_action.trigger()
    assert "No paper is in scope" in quiet_window.tables.window.notice_label.text()
    assert not client.asking


def test_an_empty_library_gives_an_empty_table_that_says_why(qtbot: QtBot, quiet_window: MainWindow,
                                                             client: EngineClient) -> None:
    build(qtbot, quiet_window, client)
    assert quiet_window.tables.window.model.rowCount() == 0
    assert "No paper is in scope" in quiet_window.tables.window.notice_label.text()


def test_columns_are_added_edited_and_removed(qtbot: QtBot) -> None:
    from engine.synthesis.paper_table import default_columns
    from ui.table_window import TableWindow

    window = TableWindow()
    qtbot.addWidget(window)
    window.set_columns(default_columns())
    assert [c.name for c in window.columns()] == ["Answer", "Method", "Data / sample", "Main result"]
    window.add_column_button.click()
    editor = window.columns_editor
    editor.item(4, 0).setText("Sample size")
    editor.item(4, 1).setText("How many participants took part?")
    editor.setCurrentCell(1, 0)
    editor.clearSelection()
    window.remove_column_button.click()  # the current row: Method
    editor.item(1, 1).setText("Which corpus was used?")  # edit a column's question
    result = default_columns()[3]
    assert window.columns() == [TableColumn("Answer", ""), TableColumn("Data / sample", "Which corpus was used?"),
                                result, TableColumn("Sample size", "How many participants took part?")]


def test_the_column_editor_leaves_the_window_to_the_rows_and_shows_whole_names(qtbot: QtBot) -> None:
    from engine.synthesis.paper_table import default_columns
    from ui.table_window import TableWindow

    window = TableWindow()
    qtbot.addWidget(window)
    window.set_columns(default_columns())
    window.resize(1000, 640)
    window.show()
    qtbot.waitUntil(lambda: window.isVisible() and window.height() == 640, timeout=5_000)
    editor = window.columns_editor
    editor_height, results_height = window.splitter.sizes()
    assert editor_height <= 640 // 3, f"the column editor takes {editor_height} of 640 px"
    assert results_height >= 2 * editor_height  # the rows get most of the window
    rows_height = sum(editor.rowHeight(row) for row in range(editor.rowCount()))
    assert editor.viewport().height() >= rows_height  # every column listed without scrolling
    metrics = editor.fontMetrics()
    for row in range(editor.rowCount()):
        name = editor.item(row, 0).text()
        assert editor.columnWidth(0) >= metrics.horizontalAdvance(name) + 6, f"{name!r} is cut"  # its margins


def test_200_rows_arrive_without_the_window_slowing_down(qtbot: QtBot) -> None:
    """Each row costs the same however many came before: the window stays responsive at 200 papers."""
    import time

    from PySide6.QtWidgets import QApplication

    from engine.table_types import PaperRow, TableCell
    from ui.table_window import ROW_LINES, TableWindow

    window = TableWindow()
    qtbot.addWidget(window)
    window.show()
    columns = [TableColumn("Answer", ""), TableColumn("Method", "m"), TableColumn("Data", "d"),
               TableColumn("Main result", "r")]
    window.model.reset(columns)
    text = ("We propose a method to embed scientific documents by pretraining a Transformer language model on "
            "citations between papers, and evaluate it on seven document-level tasks. ") * 2
    seconds = []
    for i in range(200):
        started = time.perf_counter()
        window.model.add_row(PaperRow(f"d{i}", Bibliography(f"Paper {i}"),
                                      tuple(TableCell(text, text, "p", 0, 9, 1)
                                                                   for _ in columns)))
        QApplication.processEvents()
        seconds.append(time.perf_counter() - started)
    assert window.model.rowCount() == 200
    # Measuring every row again on each insertion cost about 0.2 s a row by the 200th.
    assert sum(seconds[-50:]) / 50 < 0.06, f"the last rows took {sum(seconds[-50:]) / 50:.3f} s each"
    assert window.view.rowHeight(199) <= window.fontMetrics().lineSpacing() * ROW_LINES + 8


def test_an_empty_or_5000_character_column_question_still_builds_and_says_what_changed(
        qtbot: QtBot, quiet_window: MainWindow, client: EngineClient, tmp_path: Path) -> None:
    add_papers(qtbot, quiet_window, client, tmp_path, on_topic=1)
    tables = quiet_window.tables
    tables.window.mode_box.setCurrentIndex(tables.window.mode_box.findData("quotes"))
    long_question = ("Which corpus of scholarly papers supplies the training data? " * 90)[:5000]
    build(qtbot, quiet_window, client, [TableColumn("Training data", ""), TableColumn("Long", long_question)])
    table = tables.table
    assert table is not None and len(table.rows) == 1
    assert table.columns[0].question == "Training data"  # an empty question asks the column's name
    assert len(table.columns[1].question) <= 300
    assert "shortened" in tables.window.notice_label.text()
    assert "training data" in table.rows[0].cells[0].text
