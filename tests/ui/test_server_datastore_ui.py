"""A server datastore in the app: listed with its state in Models & Datastores, named in the scope line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.pg_server import PgServer
from PySide6.QtGui import QAction
from pytestqt.qtbot import QtBot

from engine.embed import HashingEmbedder
from engine.service import Engine
from ui.ask_pane import AskPane
from ui.engine_client import EngineClient
from ui.models_dialog import ModelsDialog


@pytest.fixture
def connected(pg_server: PgServer, tmp_path: Path) -> Iterator[EngineClient]:
    """A client whose library is connected to a published datastore "lab"."""
    path = tmp_path / "lab.jsonl"
    path.write_text("".join(json.dumps({"id": f"L{n}", "title": f"Paper {n}", "text": f"Protein folding {n}."}) + "\n"
                            for n in range(5)), encoding="utf-8")
    with Engine(home=tmp_path / "publisher") as publisher:
        publisher.embedder = HashingEmbedder()
        publisher.add_datastore(path, "lab")
        publisher.publish_datastore("lab", pg_server.url(), reader="quire_reader", replace=True)
    with Engine(home=tmp_path / "home") as member:
        member.connect_datastore("lab", pg_server.reader_url())
    client = EngineClient(Engine(tmp_path / "home"))
    yield client
    client.shutdown()


def test_models_and_datastores_lists_the_server_datastore_with_its_state(qtbot: QtBot, connected: EngineClient,
                                                                        pg_server: PgServer) -> None:
    dialog = ModelsDialog(connected)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.datastores_tree.topLevelItemCount() == 1, timeout=30_000)
    item = dialog.datastores_tree.topLevelItem(0)
    assert (item.text(0), item.text(1), item.text(3)) == ("lab", "5", "on a server")
    assert item.text(4).startswith("connected at postgresql://quire_reader@") and "reader-secret" not in item.text(4)
    dialog.select_datastore("lab")
    assert dialog.remove_datastore_button.isEnabled() and not dialog.embed_datastore_button.isEnabled()
    pg_server.stop("fast")
    try:
        dialog.snapshot = {}
        dialog.refresh()
        qtbot.waitUntil(lambda: bool(dialog.snapshot), timeout=30_000)
        item = dialog.datastores_tree.topLevelItem(0)
        assert item.text(4).startswith("⚠ unavailable: the server datastore 'lab'") and "cannot be reached" in (
            item.text(4))
    finally:
        pg_server.start()


def test_the_scope_line_says_where_the_question_goes(qtbot: QtBot, connected: EngineClient) -> None:
    pane = AskPane(QAction("Ask"))
    qtbot.addWidget(pane)
    pane.show()
    connected.list_server_datastores(pane.set_server_datastores)
    qtbot.waitUntil(pane.network_note.isVisible, timeout=30_000)
    assert pane.network_note.text().startswith("This question is sent to the server datastore lab (postgresql://"
                                               "quire_reader@")
    assert "nowhere else" in pane.network_note.text()
    pane.scope_box.setCurrentIndex(pane.scope_box.findData("library"))
    assert not pane.network_note.isVisible()
    pane.set_server_datastores([])
    pane.scope_box.setCurrentIndex(0)
    assert not pane.network_note.isVisible()
