"""LibraryModel: rows updated in place, failures explained, titles never read as markup."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import QPersistentModelIndex, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication
from pytestqt.modeltest import ModelTester

from engine.bibliography import Bibliography
from engine.types import Document, DocumentStatus
from ui.library_model import DOC_ID_ROLE, SORT_ROLE, Column, LibraryModel, plain_tooltip


def paper(doc_id: str, title: str = "", authors: tuple[str, ...] = (), year: int | None = None,
          **fields: Any) -> Document:
    return Document(id=doc_id, content_hash=doc_id * 4, path=f"/papers/{doc_id}.pdf",
                    bib=Bibliography(title, authors, year), **fields)


def titles(model: LibraryModel) -> list[str]:
    return [model.index(row, Column.TITLE).data() for row in range(model.rowCount())]


def test_updates_keep_rows_in_place_so_selection_survives(qtmodeltester: ModelTester) -> None:
    model = LibraryModel()
    qtmodeltester.check(model)
    model.set_documents([paper("a", "Alpha"), paper("b", "Beta"), paper("c", "Gamma")])
    kept = QPersistentModelIndex(model.index(2, Column.TITLE))
    changed: list[int] = []
    model.dataChanged.connect(lambda top, bottom, *_: changed.extend(range(top.row(), bottom.row() + 1)))

    model.set_documents([paper("c", "Gamma, revised"), paper("d", "Delta"), paper("b", "Beta")])

    assert titles(model) == ["Beta", "Gamma, revised", "Delta"]
    assert kept.isValid() and kept.data() == "Gamma, revised"
    assert changed == [1]  # only the row whose document changed was repainted
    qtmodeltester.check(model)


def test_cells_show_the_bibliographic_fields() -> None:
    model = LibraryModel()
    model.set_documents([paper("a", "Alpha", authors=("Ann Lee", "Bo Chen", "Cy Diaz", "Di Eze"), year=2020,
                               page_count=12)])
    row = [model.index(0, column).data() for column in Column]
    assert row == ["Alpha", "Lee et al.", "2020", "12", "Indexed"]  # Zotero's short form; the tooltip has all
    assert "Di Eze" in model.index(0, Column.AUTHORS).data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(0, Column.YEAR).data(SORT_ROLE) == 2020
    assert model.index(0, Column.TITLE).data(DOC_ID_ROLE) == "a"
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in Column] == [
        "Title", "Authors", "Year", "Pages", "Status"]


def test_a_failed_file_shows_its_name_and_the_reason_on_hover(qapp: QApplication) -> None:
    # ``qapp``: the status icon comes from the application's style, so one must exist when run alone.
    model = LibraryModel()
    failed = paper("f", status=DocumentStatus.FAILED, error="this is not a PDF, it looks like a plain text file")
    model.set_documents([failed])
    assert model.index(0, Column.TITLE).data() == "f.pdf"
    assert model.index(0, Column.STATUS).data() == "Failed"
    assert "plain text file" in model.index(0, Column.STATUS).data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(0, Column.STATUS).data(Qt.ItemDataRole.DecorationRole) is not None
    model.set_documents([replace(failed, status=DocumentStatus.INDEXED, error="", bib=Bibliography("Recovered"))])
    assert model.index(0, Column.STATUS).data(Qt.ItemDataRole.ToolTipRole) is None


def test_titles_with_markup_are_displayed_literally() -> None:
    title = "<b>x</b><script>alert(1)</script> & <i>friends</i>"
    model = LibraryModel()
    model.set_documents([paper("h", title)])
    assert model.index(0, Column.TITLE).data() == title
    rendered = QTextDocument()
    rendered.setHtml(model.index(0, Column.TITLE).data(Qt.ItemDataRole.ToolTipRole))
    assert rendered.toPlainText().startswith(title)


def test_plain_tooltip_escapes_and_keeps_line_breaks() -> None:
    assert plain_tooltip("a < b\nc") == "<qt>a &lt; b<br>c</qt>"
