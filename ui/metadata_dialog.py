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
from ui.engine_tasks import metadata_problem

# Marks the field whose value cannot be stored, beside the message that says why.
_INVALID_STYLE = "border: 2px solid #c0392b; border-radius: 3px;"


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
        self.problem_label = QLabel(self)
        self.problem_label.setWordWrap(True)
        self.problem_label.setTextFormat(Qt.TextFormat.PlainText)  # it quotes what was typed
        self.problem_label.setAccessibleName("Problem with the details")
        self.problem_label.setStyleSheet("color:#a93226")
        self.problem_label.hide()
        form = QFormLayout()
        form.addRow("Title", self.title_edit)
        form.addRow("Authors", self.authors_edit)
        form.addRow("Year", self.year_edit)
        form.addRow("Venue", self.venue_edit)
        form.addRow("DOI", self.doi_edit)
        save_or_cancel = QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        self.buttons = buttons = QDialogButtonBox(save_or_cancel, self)
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem_label)
        layout.addWidget(note)
        layout.addWidget(buttons)
        self.setMinimumWidth(520)

    def changes(self) -> MetadataChanges:
        """Keyword arguments for ``Engine.update_metadata`` (the engine validates them)."""
        authors = [line.strip() for line in self.authors_edit.toPlainText().splitlines() if line.strip()]
        return {"title": self.title_edit.text().strip(), "authors": authors, "year": self.year_edit.text().strip(),
                "venue": self.venue_edit.text().strip(), "doi": self.doi_edit.text().strip()}

    def problem(self) -> tuple[QWidget, str] | None:
        """The first field whose value the engine would refuse, with the engine's reason; None if all
        can be stored. Each field is checked on its own, so the reason belongs to that field."""
        values = self.changes()
        checks: list[tuple[QWidget, dict[str, object]]] = [
            (self.title_edit, {"title": values["title"]}), (self.authors_edit, {"authors": values["authors"]}),
            (self.year_edit, {"year": values["year"]}), (self.venue_edit, {"venue": values["venue"]}),
            (self.doi_edit, {"doi": values["doi"]})]
        for widget, field in checks:
            reason = metadata_problem(**field)
            if reason:
                return widget, reason
        return None

    def _save(self) -> None:
        """Close only with values that can be stored; otherwise keep everything typed, mark the field
        and say why beside it."""
        for edit in (self.title_edit, self.authors_edit, self.year_edit, self.venue_edit, self.doi_edit):
            edit.setStyleSheet("")
        found = self.problem()
        if found is None:
            self.problem_label.hide()
            self.accept()
            return
        widget, message = found
        widget.setStyleSheet(_INVALID_STYLE)
        widget.setFocus()
        self.problem_label.setText(message)
        self.problem_label.show()
