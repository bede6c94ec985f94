"""The selected paper's details under the library table; every field is paper data, shown escaped."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QTextBrowser, QWidget

from engine.types import Document, DocumentStatus
from ui.library_model import display_title

_STATUS = {DocumentStatus.INDEXED: "Indexed", DocumentStatus.SCANNED: "Scanned pages",
           DocumentStatus.FAILED: "Failed"}


def _row(label: str, value: str) -> str:
    return (f'<tr><td style="color:#777;padding-right:10px;white-space:nowrap">{html.escape(label)}</td>'
            f"<td>{html.escape(value)}</td></tr>")


EDIT_URL = "quire://edit"


def details_html(documents: Sequence[Document], status: Callable[[Document], str] | None = None,
                 collections: Sequence[str] = ()) -> str:
    """What the details panel shows for a selection: one paper in full, or a count. ``status`` words the
    status as the library table does (it knows which papers are still being embedded)."""
    if not documents:
        return '<p style="color:#888">Select a paper to see its details. Double-click it to read it.</p>'
    if len(documents) > 1:
        pages = sum(document.page_count for document in documents)
        return (f"<p><b>{len(documents)} papers selected</b> ({pages} pages).</p>"
                '<p style="color:#888">Ask with the scope “Selected papers” to question just these.</p>')
    document = documents[0]
    bib = document.bib
    rows = [_row("Authors", ", ".join(bib.authors) or "unknown"),
            _row("Year", str(bib.year) if bib.year else "unknown"),
            _row("Pages", str(document.page_count)),
            _row("Status", status(document) if status else _STATUS.get(document.status, document.status.value))]
    if document.error:
        rows.append(_row("Why", document.error))
    if bib.venue:
        rows.append(_row("Venue", bib.venue))
    if bib.doi:
        rows.append(_row("DOI", bib.doi))
    if bib.arxiv_id:
        rows.append(_row("arXiv", bib.arxiv_id))
    rows.append(_row("File", document.path))
    if collections:
        rows.append(_row("Collections", "; ".join(collections)))
    abstract = (f'<p style="margin-top:8px;line-height:135%">{html.escape(document.abstract)}</p>'
                if document.abstract else "")
    edit = f'<p><a href="{EDIT_URL}">Edit details…</a> (title, authors, year, venue, DOI)</p>'
    return (f'<p style="font-size:large;font-weight:600;margin-bottom:6px">{html.escape(display_title(document))}</p>'
            f'<table cellspacing="0" cellpadding="1">{"".join(rows)}</table>{edit}{abstract}')


class DocumentDetails(QTextBrowser):
    edit_requested = Signal(str)  # doc id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Paper details")
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._on_link)
        self._shown: list[Document] = []
        self.show_documents([])

    def show_documents(self, documents: Sequence[Document], status: Callable[[Document], str] | None = None,
                       collections: Sequence[str] = ()) -> None:
        self._shown = list(documents)
        self.setHtml(details_html(documents, status, collections))

    def _on_link(self, url: QUrl) -> None:
        if url.toString() == EDIT_URL and len(self._shown) == 1:
            self.edit_requested.emit(self._shown[0].id)
