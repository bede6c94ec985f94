"""Edit a paper's title, authors, year, venue and DOI (what references and exports use)."""

from __future__ import annotations

from typing import TypedDict

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from engine.types import Document


class MetadataChanges(TypedDict):
    """What the dialog hands ``Engine.update_metadata`` (the engine validates the values)."""

    title: str
    authors: list[str]
    year: str
    venue: str
    doi: str


class MetadataDialog(QDialog):
    """Fields filled from ``document``; :meth:`changes` gives what to store (authors one per line)."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit Paper Details")
        self.setAccessibleName("Edit paper details")
        bib = document.bib
        self.title_edit = QLineEdit(bib.title, self)
        self.title_edit.setAccessibleName("Title")
        self.authors_edit = QPlainTextEdit("\n".join(bib.authors), self)
        self.authors_edit.setAccessibleName("Authors")
        self.authors_edit.setPlaceholderText("One author per line, e.g. Arman Cohan")
        self.authors_edit.setTabChangesFocus(True)
        self.authors_edit.setFixedHeight(self.authors_edit.fontMetrics().lineSpacing() * 5 + 12)
        self.year_edit = QLineEdit(str(bib.year or ""), self)
        self.year_edit.setAccessibleName("Year")
        self.year_edit.setPlaceholderText("e.g. 2020")
        self.venue_edit = QLineEdit(bib.venue, self)
        self.venue_edit.setAccessibleName("Venue")
        self.venue_edit.setPlaceholderText("Journal or proceedings, e.g. Nucleic Acids Research")
        self.doi_edit = QLineEdit(bib.doi, self)
        self.doi_edit.setAccessibleName("DOI")
        self.doi_edit.setPlaceholderText("10.1234/…")
        note = QLabel("Used in answers' references and in Markdown, BibTeX, RIS and CSL-JSON exports. Re-reading "
                      "the PDF or importing from Zotero again keeps your corrections.", self)
        note.setWordWrap(True)
        note.setTextFormat(Qt.TextFormat.PlainText)
        form = QFormLayout()
        form.addRow("Title", self.title_edit)
        form.addRow("Authors", self.authors_edit)
        form.addRow("Year", self.year_edit)
        form.addRow("Venue", self.venue_edit)
        form.addRow("DOI", self.doi_edit)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(buttons)
        self.setMinimumWidth(520)

    def changes(self) -> MetadataChanges:
        """Keyword arguments for ``Engine.update_metadata`` (the engine validates them)."""
        authors = [line.strip() for line in self.authors_edit.toPlainText().splitlines() if line.strip()]
        return {"title": self.title_edit.text().strip(), "authors": authors, "year": self.year_edit.text().strip(),
                "venue": self.venue_edit.text().strip(), "doi": self.doi_edit.text().strip()}
