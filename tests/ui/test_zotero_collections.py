"""Zotero collections in the app: a Collections row in the details, the filter finds papers by collection,
the scope "Collection…" asks within one, a supplement PDF has its own title, and counts are worded right."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fixtures.zotero_db import Zotero, make_pdf
from PySide6.QtCore import QItemSelectionModel, QSettings
from PySide6.QtWidgets import QInputDialog
from pytestqt.qtbot import QtBot

from ui.collection_scope import COLLECTION
from ui.engine_client import EngineClient
from ui.library_model import Column
from ui.main_window import MainWindow

TIMEOUT_MS = 300_000
HOSTILE = "<b>Thesis</b> & <i>co</i>"


def zotero_folder(tmp_path: Path) -> Path:
    z = Zotero(tmp_path / "Zotero")
    paper = z.item("journalArticle", "PAPER001", {"title": "Citation-aware retrieval"})
    z.attach(paper, "ATTMAIN1", "storage:paper.pdf")
    z.attach(paper, "ATTSUPP1", "storage:supplement.pdf", title="Supplementary tables")
    other = z.item("journalArticle", "OTHER001", {"title": "Bread and yeast"})
    z.attach(other, "ATTOTHR1", "storage:other.pdf")
    missing = z.item("journalArticle", "MISS0001", {"title": "Only in the cloud"})
    z.attach(missing, "ATTMISS1", "storage:cloud.pdf")
    for key, name in (("ATTMAIN1", "paper.pdf"), ("ATTSUPP1", "supplement.pdf"), ("ATTOTHR1", "other.pdf")):
        make_pdf(z.folder / "storage" / key / name, name)
    thesis = z.collect(HOSTILE, [])
    z.collect("Related work", [paper], parent=thesis)
    z.collect("Baking", [other])
    z.close()
    return z.folder


def select_title(window: MainWindow, title: str) -> None:
    proxy = window.library.proxy
    for row in range(proxy.rowCount()):
        index = proxy.index(row, Column.TITLE)
        if index.data() == title:
            window.table.selectionModel().select(index, QItemSelectionModel.SelectionFlag.ClearAndSelect |
                                                 QItemSelectionModel.SelectionFlag.Rows)
            return
    raise AssertionError(f"no row titled {title!r}")


def test_collections_are_shown_filtered_and_asked_within(qtbot: QtBot, client: EngineClient,
                                                         window_settings: QSettings, shown_errors: list[str],
                                                         tmp_path: Path, monkeypatch: Any) -> None:
    window = MainWindow(client, window_settings, progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.show()
    window.import_zotero(str(zotero_folder(tmp_path)))
    qtbot.waitUntil(lambda: window.model.rowCount() == 3 and not client.busy and bool(shown_errors),
                    timeout=TIMEOUT_MS)
    assert shown_errors[0].startswith("1 Zotero item could not be added")
    shown_errors.clear()
    titles = sorted(window.model.document(row).bib.title for row in range(3))
    assert titles == ["Bread and yeast", "Citation-aware retrieval",
                      "Citation-aware retrieval \u2014 Supplementary tables"]  # not two identical rows

    select_title(window, "Citation-aware retrieval")
    details = window.library.details
    assert f"Collections{HOSTILE} \u203a Related work" in details.toPlainText().replace("\n", "")
    assert "<b>Thesis" not in details.toHtml()  # the name is text, never markup

    window.library.filter_box.setText("related WORK")
    assert window.library.proxy.rowCount() == 2  # the paper and its supplement
    window.library.filter_box.setText("baking")
    assert [window.library.proxy.index(0, 0).data()] == ["Bread and yeast"]
    window.library.filter_box.clear()

    monkeypatch.setattr(QInputDialog, "getItem", lambda _parent, _title, _label, items, *_: (HOSTILE, True))
    box = window.ask_pane.scope_box
    index = box.findData(COLLECTION)
    box.setCurrentIndex(index)
    box.activated.emit(index)
    assert window.ask_pane.collection == HOSTILE and box.currentText() == f"Collection: {HOSTILE}"
    in_scope = window.library.collection_doc_ids(HOSTILE)
    assert len(in_scope) == 2 and all(window.model.document(window.model.row_of(i) or 0).bib.title.startswith(
        "Citation-aware") for i in in_scope)

    window.ask_pane.question_box.setPlainText("How does citation-aware retrieval work?")
    window.tables.window.mode_box.setCurrentIndex(window.tables.window.mode_box.findData("quotes"))
    window.table_action.trigger()
    qtbot.waitUntil(lambda: window.tables.table is not None and not client.busy, timeout=TIMEOUT_MS)
    assert window.tables.table is not None and window.tables.table.papers_in_scope == 2
    assert {row.doc_id for row in window.tables.table.rows} <= set(in_scope)


def test_the_collection_scope_without_collections_keeps_the_scope(qtbot: QtBot, window: MainWindow) -> None:
    box = window.ask_pane.scope_box
    before = box.currentIndex()
    index = box.findData(COLLECTION)
    box.setCurrentIndex(index)
    box.activated.emit(index)
    assert box.currentIndex() == before and window.ask_pane.collection == ""
