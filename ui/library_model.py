"""The library as a table: one row per document, updated in place as the engine reports changes."""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from enum import IntEnum
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QStyle

from engine.types import Document, DocumentStatus

DOC_ID_ROLE = Qt.ItemDataRole.UserRole + 1
SORT_ROLE = Qt.ItemDataRole.UserRole + 2
COMPACT_ROLE = Qt.ItemDataRole.UserRole + 3  # the authors as "Cohan et al.", for a column too narrow for more

AnyIndex = QModelIndex | QPersistentModelIndex


class Column(IntEnum):
    TITLE = 0
    AUTHORS = 1
    YEAR = 2
    PAGES = 3
    STATUS = 4


HEADERS = {Column.TITLE: "Title", Column.AUTHORS: "Authors", Column.YEAR: "Year", Column.PAGES: "Pages",
           Column.STATUS: "Status"}

# Short words, so the Status column is narrow enough to show whole; its tooltip and the details
# pane say more.
_STATUS_TEXT = {DocumentStatus.INDEXED: "Indexed", DocumentStatus.SCANNED: "Scanned",
                DocumentStatus.FAILED: "Failed"}
_EMBEDDING = "Embedding…"
STATUS_TEXTS = (*_STATUS_TEXT.values(), _EMBEDDING)  # every text the Status column shows
_STATUS_TIPS = {DocumentStatus.SCANNED: "Some pages are scanned images without text: they cannot be searched"}
_WORD = re.compile(r"[^\W_]+")


def display_title(document: Document) -> str:
    """The title, or the file name for a paper whose title could not be read (and for failures)."""
    return document.bib.title or Path(document.path).name or document.id


def plain_tooltip(text: str) -> str:
    """A tooltip showing ``text`` literally.

    Qt guesses whether tooltip text is HTML, so a title such as ``<b>x</b>`` would be rendered;
    escaping it inside an explicit rich-text wrapper shows it as written, and lets long
    reasons wrap instead of running off the screen.
    """
    return "<qt>" + html.escape(text).replace("\n", "<br>") + "</qt>"


def surname(author: str) -> str:
    """The family name of ``"Arman Cohan"`` or ``"Cohan, Arman"``: ``"Cohan"``."""
    name = author.strip()
    if "," in name:
        return name.split(",", 1)[0].strip()
    words = name.split()
    return words[-1] if words else ""


def authors_short(authors: Sequence[str]) -> str:
    """The authors as Zotero's Creator column shows them: ``Cohan``, ``Cohan and Feldman``,
    ``Cohan et al.``; short enough to read whole in a narrow window (the tooltip lists them all)."""
    names = [surname(author) for author in authors if surname(author)]
    if len(names) > 2:
        return f"{names[0]} et al."
    return " and ".join(names)


def first_author_short(authors: Sequence[str]) -> str:
    """``Cohan et al.`` for two authors or more, ``Cohan`` for one: the least an author column shows."""
    names = [surname(author) for author in authors if surname(author)]
    return f"{names[0]} et al." if len(names) > 1 else "".join(names)


def _folded_words(text: str) -> list[str]:
    """The words of ``text``, case and accents folded (``Émile`` matches ``emile``)."""
    plain = "".join(char for char in unicodedata.normalize("NFKD", text) if not unicodedata.combining(char))
    return _WORD.findall(plain.casefold())


def matches_word_starts(query: str, fields: Sequence[str]) -> bool:
    """Whether every word of ``query`` begins a word of ``fields``, as Zotero's quick search matches:
    ``thesis`` finds "Thesis" and "theses", never "translesion synthesis"."""
    wanted = _folded_words(query)
    words = [word for field in fields for word in _folded_words(field)]
    return all(any(word.startswith(part) for word in words) for part in wanted)


class LibraryModel(QAbstractTableModel):
    """Documents in the order the engine lists them; a proxy model does any sorting."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._documents: list[Document] = []
        self._icons: dict[DocumentStatus, QIcon] = {}
        self._embedding: set[str] = set()  # indexed papers whose passages are still being embedded

    # --- reading -----------------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's own default
        return 0 if parent.isValid() else len(self._documents)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Column)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        horizontal = orientation == Qt.Orientation.Horizontal
        if horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(Column):
            return HEADERS[Column(section)]
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._documents):
            return None
        document = self._documents[index.row()]
        column = Column(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return self.status_text(document) if column == Column.STATUS else self._display(document, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(document, column)
        if role == SORT_ROLE:
            return self._sort_key(document, column)
        if role == DOC_ID_ROLE:
            return document.id
        if role == COMPACT_ROLE and column == Column.AUTHORS:
            return first_author_short(document.bib.authors)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (Column.YEAR, Column.PAGES):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.DecorationRole and column == Column.STATUS:
            return self._status_icon(document.status)
        return None

    def set_embedding(self, doc_ids: set[str]) -> None:
        """Papers to show as "Embedding…" (searchable by keyword already, by meaning soon)."""
        changed = self._embedding ^ set(doc_ids)
        self._embedding = set(doc_ids)
        for row, document in enumerate(self._documents):
            if document.id in changed:
                index = self.index(row, Column.STATUS)
                self.dataChanged.emit(index, index)

    def status_text(self, document: Document) -> str:
        if document.id in self._embedding and document.status == DocumentStatus.INDEXED:
            return _EMBEDDING
        return _STATUS_TEXT.get(document.status, document.status.value)

    def document(self, row: int) -> Document:
        return self._documents[row]

    def documents(self) -> list[Document]:
        return list(self._documents)

    def row_of(self, doc_id: str) -> int | None:
        for row, document in enumerate(self._documents):
            if document.id == doc_id:
                return row
        return None

    # --- updating ----------------------------------------------------------------------------

    def set_documents(self, documents: Sequence[Document]) -> None:
        """Bring the rows in line with ``documents``, changing only what changed.

        Updating in place (rather than resetting) keeps the user's selection and scroll
        position while a batch of files is being added.
        """
        wanted = {document.id: document for document in documents}
        for row in range(len(self._documents) - 1, -1, -1):
            if self._documents[row].id not in wanted:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._documents[row]
                self.endRemoveRows()
        for row, current in enumerate(self._documents):
            fresh = wanted.pop(current.id)
            if fresh != current:
                self._documents[row] = fresh
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(Column) - 1))
        if wanted:  # what is left is new, kept in the engine's order
            first = len(self._documents)
            self.beginInsertRows(QModelIndex(), first, first + len(wanted) - 1)
            self._documents.extend(wanted.values())
            self.endInsertRows()

    # --- helpers -----------------------------------------------------------------------------

    @staticmethod
    def _display(document: Document, column: Column) -> str:
        if column == Column.TITLE:
            return display_title(document)
        if column == Column.AUTHORS:
            return authors_short(document.bib.authors)
        if column == Column.YEAR:
            return str(document.bib.year) if document.bib.year else ""
        if column == Column.PAGES:
            return str(document.page_count) if document.page_count else ""
        return _STATUS_TEXT.get(document.status, document.status.value)

    @staticmethod
    def _tooltip(document: Document, column: Column) -> str | None:
        if column == Column.TITLE:
            return plain_tooltip(f"{display_title(document)}\n{document.path}")
        if column == Column.AUTHORS and document.bib.authors:
            return plain_tooltip(", ".join(document.bib.authors))
        if column == Column.STATUS and document.error:
            return plain_tooltip(document.error)
        if column == Column.STATUS and document.status in _STATUS_TIPS:
            return plain_tooltip(_STATUS_TIPS[document.status])
        return None

    @staticmethod
    def _sort_key(document: Document, column: Column) -> str | int:
        if column == Column.TITLE:
            return display_title(document).casefold()
        if column == Column.AUTHORS:
            return authors_short(document.bib.authors).casefold()
        if column == Column.YEAR:
            return document.bib.year or 0
        if column == Column.PAGES:
            return document.page_count
        return document.status.value

    def _status_icon(self, status: DocumentStatus) -> QIcon | None:
        pixmap = {DocumentStatus.FAILED: QStyle.StandardPixmap.SP_MessageBoxCritical,
                  DocumentStatus.SCANNED: QStyle.StandardPixmap.SP_MessageBoxWarning}.get(status)
        if pixmap is None:
            return None
        if status not in self._icons:
            self._icons[status] = QApplication.style().standardIcon(pixmap)
        return self._icons[status]


class LibraryFilter(QSortFilterProxyModel):
    """The filter box's matching: a paper matches when each word typed begins a word of its title,
    authors, year, status or the name of a collection it is filed in (see :func:`matches_word_starts`)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._text = ""

    def set_text(self, text: str) -> None:
        if not hasattr(self, "beginFilterChange"):  # Qt before 6.10 (the supported range starts at 6.6)
            self._text = text.strip()
            self.invalidateRowsFilter()
            return
        self.beginFilterChange()
        self._text = text.strip()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: AnyIndex) -> bool:
        model = self.sourceModel()
        if not self._text or not isinstance(model, LibraryModel) or source_row >= model.rowCount():
            return True
        document = model.document(source_row)
        fields = [display_title(document), *document.bib.authors, str(document.bib.year or ""),
                  model.status_text(document), *document.collections]
        return matches_word_starts(self._text, fields)
