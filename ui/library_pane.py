"""The library pane: a filter box, the papers table (or the empty state), the selected paper's
details and the attached datastores."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engine.types import Document
from ui.collection_scope import collection_names, doc_ids_in
from ui.column_fit import HIDE, SHRINK, ColumnFitter, Step
from ui.document_details import DocumentDetails
from ui.empty_state import EmptyState
from ui.library_model import (
    COMPACT_ROLE,
    DOC_ID_ROLE,
    HEADERS,
    SORT_ROLE,
    STATUS_TEXTS,
    Column,
    LibraryFilter,
    LibraryModel,
)

# Room around a cell's text: the item's margins, and in a header the sort arrow.
_CELL_PADDING = 14
_HEADER_PADDING = 26


def column_widths(table: QTableView) -> tuple[dict[int, int], dict[int, int], int]:
    """The widths the columns beside the title want, the least each may have, and the authors' width
    that still shows a long first surname whole, all measured in the table's font. Year, Pages and
    Status show their whole text or hide; the authors want room for "Kowalczykowski et al." and keep
    at least room for "Cohan et al." (a longer first surname is elided only in the narrowest window,
    its tooltip listing every author)."""
    cells, headers = table.fontMetrics(), table.horizontalHeader().fontMetrics()

    def fits(column: Column, *texts: str) -> int:
        header = headers.horizontalAdvance(HEADERS[column]) + _HEADER_PADDING
        return max(header, *(cells.horizontalAdvance(text) + _CELL_PADDING for text in texts))

    icon = table.style().pixelMetric(QStyle.PixelMetric.PM_SmallIconSize) + 4  # a failed paper's status icon
    fixed: dict[int, int] = {Column.YEAR: fits(Column.YEAR, "0000"), Column.PAGES: fits(Column.PAGES, "0000"),
                             Column.STATUS: fits(Column.STATUS, *STATUS_TEXTS) + icon}
    wanted: dict[int, int] = {Column.AUTHORS: fits(Column.AUTHORS, "Kowalczykowski et al."), **fixed}
    minimum: dict[int, int] = {Column.AUTHORS: fits(Column.AUTHORS, "Cohan et al."), **fixed}
    return wanted, minimum, fits(Column.AUTHORS, "Kowalczykowski")


class AuthorsDelegate(QStyledItemDelegate):
    """Draws the authors as "Cohan and Feldman" where that fits the column, else "Cohan et al.", else
    "Cohan", rather than cutting a name in the middle."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.text = authors_for_width(option.text, str(index.data(COMPACT_ROLE) or ""),
                                        option.rect.width() - _CELL_PADDING, option.fontMetrics)


def authors_for_width(full: str, compact: str, width: int, metrics: QFontMetrics) -> str:
    """The longest of ``full`` ("Cohan and Feldman"), ``compact`` ("Cohan et al.") and the first
    surname alone that fits ``width`` pixels; the surname alone when none does (the view elides it)."""
    first = compact.removesuffix(" et al.")
    choices = [text for text in (full, compact, first) if text]
    return next((text for text in choices if metrics.horizontalAdvance(text) <= width), first or full)


class LibraryPane(QWidget):
    """Owns the library's widgets; the main window owns the actions they trigger."""

    open_requested = Signal(str)  # doc id: the user wants to read this paper
    edit_requested = Signal(str)  # doc id: the user wants to correct its details
    selection_changed = Signal()

    def __init__(self, add_action: QAction, remove_action: QAction, parent: QWidget | None = None,
                 demo_action: QAction | None = None) -> None:
        super().__init__(parent)
        self.model = LibraryModel(self)
        self.proxy = LibraryFilter(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)

        self.filter_box = QLineEdit(self)
        self.filter_box.setPlaceholderText("Filter papers by title, author, year or collection")
        self.filter_box.setAccessibleName("Filter papers")
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.textChanged.connect(self.proxy.set_text)
        self.filter_box.textChanged.connect(lambda _: self._update_no_match())
        self.no_match_label = QLabel(self)
        self.no_match_label.setTextFormat(Qt.TextFormat.PlainText)
        self.no_match_label.setAccessibleName("No matching papers")
        self.no_match_label.setWordWrap(True)
        self.no_match_label.hide()

        self.table = self._create_table(remove_action)
        # A narrow table shows the title, the first author and the year: Pages hides whole first, then
        # the authors narrow while a long first surname still fits, then Status hides, then the authors
        # narrow to a short "Surname et al.", and only then the year goes.
        wanted, minimum, long_surname = column_widths(self.table)
        for column, width in wanted.items():
            self.table.horizontalHeader().resizeSection(column, width)
        self.column_fitter = ColumnFitter(
            self.table, Column.TITLE, minimum=minimum,
            give_way=(Step(HIDE, Column.PAGES), Step(SHRINK, Column.AUTHORS, long_surname), Step(HIDE, Column.STATUS),
                      Step(SHRINK, Column.AUTHORS), Step(HIDE, Column.YEAR), Step(HIDE, Column.AUTHORS)))
        self.empty_state = EmptyState(add_action, self, demo_action)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.empty_state)
        self.stack.addWidget(self.table)

        self.datastore_entries: list[tuple[str, int]] = []
        self.details = DocumentDetails(self)
        self.details.edit_requested.connect(self.edit_requested)
        self.datastores_label = QLabel(self)
        self.datastores_label.setTextFormat(Qt.TextFormat.PlainText)
        self.datastores_label.setAccessibleName("Attached datastores")
        self.datastores_label.setWordWrap(True)
        self.datastores_label.setObjectName("datastores")
        self.datastores_label.hide()

        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.setObjectName("librarySplitter")
        top = QWidget(self)
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.setSpacing(6)
        top_layout.addWidget(self.filter_box)
        top_layout.addWidget(self.no_match_label)
        top_layout.addWidget(self.stack, 1)
        self.splitter.addWidget(top)
        self.splitter.addWidget(self.details)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 4, 8)
        layout.setSpacing(6)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.datastores_label)

        self.model.rowsInserted.connect(self._update_page)
        self.model.rowsRemoved.connect(self._update_page)
        self.model.modelReset.connect(self._update_page)
        self.model.dataChanged.connect(self._show_details)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.table.doubleClicked.connect(self._on_double_click)
        self._update_page()

    # --- public ----------------------------------------------------------------------------

    def selected_doc_ids(self) -> list[str]:
        rows = self.table.selectionModel().selectedRows(Column.TITLE)
        return [index.data(DOC_ID_ROLE) for index in rows]

    def collection_doc_ids(self, name: str) -> list[str]:
        """The papers filed in collection ``name`` (or its sub-collections)."""
        return doc_ids_in(self.model.documents(), name)

    def collection_names(self) -> list[str]:
        return collection_names(self.model.documents())

    def selected_documents(self) -> list[Document]:
        rows = (self.model.row_of(doc_id) for doc_id in self.selected_doc_ids())
        return [self.model.document(row) for row in rows if row is not None]

    def set_datastores(self, entries: Sequence[tuple[str, int]]) -> None:
        """Attached datastores as (name, paper count); hidden when there are none."""
        self.datastore_entries = list(entries)
        if not entries:
            self.datastores_label.hide()
            return
        listed = ", ".join(f"{name} ({count:,} papers)" for name, count in entries)
        self.datastores_label.setText(f"Datastores: {listed}")
        self.datastores_label.show()

    # --- construction ----------------------------------------------------------------------

    def _create_table(self, remove_action: QAction) -> QTableView:
        table = QTableView(self)
        table.setModel(self.proxy)
        table.setAccessibleName("Library")
        table.setAccessibleDescription("The papers in your library")
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setAlternatingRowColors(True)
        table.setWordWrap(False)
        table.setShowGrid(False)
        table.verticalHeader().hide()
        table.verticalHeader().setDefaultSectionSize(26)
        table.setSortingEnabled(True)
        table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # the engine's order (oldest first) until asked
        header = table.horizontalHeader()
        header.setHighlightSections(False)
        header.setMinimumSectionSize(36)
        header.setSectionResizeMode(Column.TITLE, QHeaderView.ResizeMode.Stretch)
        table.setItemDelegateForColumn(Column.AUTHORS, AuthorsDelegate(table))
        for column in (Column.AUTHORS, Column.YEAR, Column.PAGES, Column.STATUS):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        table.addAction(remove_action)
        return table

    # --- reactions -------------------------------------------------------------------------

    def _update_page(self) -> None:
        has_papers = self.model.rowCount() > 0
        self.stack.setCurrentWidget(self.table if has_papers else self.empty_state)
        self.filter_box.setVisible(has_papers)
        self.details.setVisible(has_papers)
        self._show_details()

    def _update_no_match(self) -> None:
        """A filter that hides every paper says so, rather than showing an empty table."""
        text = self.filter_box.text().strip()
        nothing = bool(text) and self.proxy.rowCount() == 0 and self.model.rowCount() > 0
        self.no_match_label.setText(f"No paper's title, authors, year or collection matches “{text}”. Clear the "
                                    "filter to see all papers." if nothing else "")
        self.no_match_label.setVisible(nothing)

    def _on_selection_changed(self) -> None:
        self._show_details()
        self.selection_changed.emit()

    def _show_details(self) -> None:
        documents = self.selected_documents()
        collections = documents[0].collections if len(documents) == 1 else ()
        self.details.show_documents(documents, self.model.status_text, collections)

    def _on_double_click(self, index: QModelIndex) -> None:
        doc_id = index.siblingAtColumn(Column.TITLE).data(DOC_ID_ROLE)
        if doc_id:
            self.open_requested.emit(doc_id)
