"""The table of papers opens showing five papers or more at 1366x768 and 1024x700, however long their quotes."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSize
from pytestqt.qtbot import QtBot

from engine.bibliography import Bibliography
from engine.table_types import PaperRow, TableCell, TableColumn
from ui.table_window import TableWindow

QUOTE = ("We propose a method to embed scientific documents by pretraining a Transformer language model on "
         "citations between papers, and evaluate it on seven document-level tasks. ") * 3


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (1024, 700)])
def test_the_table_shows_more_than_three_rows(qtbot: QtBot, width: int, height: int) -> None:
    window = TableWindow()
    qtbot.addWidget(window)
    # The size it opens at, within that screen less a title bar and borders (as ui.window_state fits it).
    window.resize(window.size().boundedTo(QSize(width - 16, height - 48)))
    window.show()
    qtbot.waitExposed(window)
    columns = [TableColumn("Answer", ""), TableColumn("Method", "m"), TableColumn("Main result", "r")]
    window.set_columns(columns)
    window.model.reset(columns)
    for i in range(12):
        window.model.add_row(PaperRow(f"d{i}", Bibliography(f"Paper {i}"),
                                      tuple(TableCell(QUOTE, QUOTE, "p", 0, 9, 1) for _ in columns)))
    qtbot.wait(50)
    shown = sum(window.view.rowViewportPosition(row) + window.view.rowHeight(row) <= window.view.viewport().height()
                for row in range(window.model.rowCount()))
    # Six-line rows in a third of the height left four papers here (three with a longer title column).
    assert shown >= 5, (shown, window.view.viewport().height(), window.view.rowHeight(0))
