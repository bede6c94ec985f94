"""Models & Datastores at 1366x768 and 1024x700: no column cut, a model list of many rows, the language model in
use named, and a button that attaches the sample datastore (on a real engine and the real catalog)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QTreeWidget
from pytestqt.qtbot import QtBot

from ui.engine_client import DEMO_DATASTORE, EngineClient
from ui.models_dialog import MODEL_ROWS_SHOWN, ModelsDialog

CELL_PADDING = 6  # pixels a cell's text is set in from its edges


def _cut(tree: QTreeWidget) -> list[str]:
    """The texts (headers and cells) wider than their column."""
    metrics = tree.fontMetrics()
    cut = []
    for column in range(tree.columnCount()):
        width = tree.header().sectionSize(column)
        texts = [tree.headerItem().text(column)] + [tree.topLevelItem(row).text(column)
                                                    for row in range(tree.topLevelItemCount())]
        cut += [text for text in texts if metrics.horizontalAdvance(text) + CELL_PADDING > width]
    return cut


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (1024, 700)])
def test_models_and_datastores_fit_and_say_what_is_in_use(qtbot: QtBot, client: EngineClient, width: int,
                                                          height: int) -> None:
    dialog = ModelsDialog(client)
    qtbot.addWidget(dialog)
    dialog.resize(width - 100, height - 100)
    dialog.show()
    qtbot.waitUntil(lambda: bool(dialog.snapshot) and dialog.models_tree.topLevelItemCount() > 0, timeout=30_000)
    assert _cut(dialog.models_tree) == [] and _cut(dialog.datastores_tree) == []
    rows = dialog.models_tree.viewport().height() // max(1, dialog.models_tree.sizeHintForRow(0))
    assert rows >= MODEL_ROWS_SHOWN - 1, rows
    assert dialog.in_use_label.text().startswith("Language model in use: ")
    assert dialog.demo_datastore_button.isVisible() and dialog.demo_datastore_button.isEnabled()


@pytest.mark.slow
def test_the_sample_datastore_button_attaches_it(qtbot: QtBot, client: EngineClient) -> None:
    dialog = ModelsDialog(client)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: bool(dialog.snapshot), timeout=30_000)
    dialog.demo_datastore_button.click()
    qtbot.waitUntil(lambda: dialog.select_datastore(DEMO_DATASTORE), timeout=600_000)
    assert not dialog.demo_datastore_button.isEnabled()  # attached once
