"""Edit Details: a value the engine would refuse keeps the dialog open, marks the field and loses
nothing typed."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox
from pytestqt.qtbot import QtBot

from engine.bibliography import Bibliography
from engine.types import Document
from ui.metadata_dialog import MetadataDialog


def _document() -> Document:
    return Document(id="d" * 64, content_hash="d" * 64, path="/papers/deep.pdf",
                    bib=Bibliography("Deep learning", authors=("Yann LeCun",), year=None), page_count=9)


def test_an_invalid_year_keeps_the_dialog_open_with_the_field_marked_and_the_doi_kept(qtbot: QtBot) -> None:
    dialog = MetadataDialog(_document())
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.year_edit.setText("20l5")
    dialog.doi_edit.setText("10.1038/nature14539")
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)

    assert dialog.isVisible() and dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.problem_label.isVisible() and dialog.problem_label.text().startswith("Year:")
    assert dialog.year_edit.styleSheet() and not dialog.doi_edit.styleSheet()  # the year is the one marked
    assert dialog.doi_edit.text() == "10.1038/nature14539" and dialog.year_edit.text() == "20l5"

    dialog.year_edit.setText("2015")
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    assert dialog.result() == QDialog.DialogCode.Accepted and not dialog.isVisible()
    assert dialog.changes()["doi"] == "10.1038/nature14539" and dialog.changes()["year"] == "2015"


def test_a_malformed_doi_is_marked_and_the_other_fields_are_kept(qtbot: QtBot) -> None:
    dialog = MetadataDialog(_document())
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.year_edit.setText("2015")
    dialog.doi_edit.setText("nature14539")
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Save), Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and dialog.problem_label.text().startswith("DOI:")
    assert dialog.doi_edit.styleSheet() and not dialog.year_edit.styleSheet()
    assert dialog.year_edit.text() == "2015"
