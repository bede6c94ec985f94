"""The main window: the library table (or an invitation to drop papers), menus and ingestion progress."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QByteArray, QMimeData, QSettings, QSortFilterProxyModel, Qt
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDragMoveEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHeaderView,
    QMainWindow,
    QStackedWidget,
    QTableView,
    QWidget,
)

from engine.importer import IngestResult, Outcome
from ui import errors
from ui.empty_state import EmptyState
from ui.engine_client import EngineClient
from ui.ingest_progress import IngestProgress
from ui.library_model import DOC_ID_ROLE, SORT_ROLE, Column, LibraryModel, display_title

_GEOMETRY = "main_window/geometry"
_STATE = "main_window/state"
_HEADER = "main_window/library_header"
_LAST_FOLDER = "paths/last_folder"
_MESSAGE_MS = 8000


def local_paths(mime: QMimeData) -> list[str]:
    """The local files and folders in dropped data; remote URLs are not ours to fetch."""
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile() and url.toLocalFile()]


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def summarize(outcomes: Counter[str]) -> str:
    """A one-line account of a finished batch, for the status bar."""
    parts = []
    if outcomes[Outcome.ADDED]:
        parts.append(f"added {_plural(outcomes[Outcome.ADDED], 'paper')}")
    if outcomes[Outcome.UPDATED]:
        parts.append(f"updated {outcomes[Outcome.UPDATED]}")
    if outcomes[Outcome.UNCHANGED]:
        parts.append(f"{outcomes[Outcome.UNCHANGED]} already in the library")
    if outcomes[Outcome.FAILED]:
        parts.append(f"{outcomes[Outcome.FAILED]} could not be added")
    if not parts:
        return "No PDF files found there."
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


class MainWindow(QMainWindow):
    """Shows the library and turns user gestures into :class:`EngineClient` requests."""

    def __init__(self, client: EngineClient, settings: QSettings, parent: QWidget | None = None, *,
                 progress_delay_ms: int = 400) -> None:
        super().__init__(parent)
        self._client = client
        self._settings = settings
        self._outcomes: Counter[str] = Counter()
        self._was_cancelled = False
        self.setWindowTitle("Quire")
        self.setAcceptDrops(True)

        self.model = LibraryModel(self)
        self._proxy = QSortFilterProxyModel(self)
        self._proxy.setSourceModel(self.model)
        self._proxy.setSortRole(SORT_ROLE)

        self._create_actions()
        self.table = self._create_table()
        self.empty_state = EmptyState(self.add_files_action, self)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.empty_state)
        self.stack.addWidget(self.table)
        self.setCentralWidget(self.stack)
        self._create_menus()

        self.ingest_progress = IngestProgress(self.cancel_action, self, show_delay_ms=progress_delay_ms)
        self.statusBar().addPermanentWidget(self.ingest_progress)
        self.ingest_progress.hide()

        self.model.rowsInserted.connect(self._update_page)
        self.model.rowsRemoved.connect(self._update_page)
        self.model.modelReset.connect(self._update_page)
        self.table.selectionModel().selectionChanged.connect(self._update_actions)
        self._connect_client()
        self._restore_state()
        self._update_page()
        self._update_actions()
        client.refresh()

    # --- public ------------------------------------------------------------------------------

    def add_paths(self, paths: Sequence[str | Path]) -> None:
        """Queue files and folders for ingestion."""
        if paths:
            self._client.add_paths(paths)

    def selected_doc_ids(self) -> list[str]:
        rows = self.table.selectionModel().selectedRows(Column.TITLE)
        return [index.data(DOC_ID_ROLE) for index in rows]

    # --- construction ------------------------------------------------------------------------

    def _create_actions(self) -> None:
        self.add_files_action = QAction("&Add PDFs…", self)
        self.add_files_action.setShortcut(QKeySequence.StandardKey.Open)
        self.add_files_action.setStatusTip("Add PDF files to the library")
        self.add_files_action.triggered.connect(self._choose_files)

        self.add_folder_action = QAction("Add &Folder…", self)
        self.add_folder_action.setShortcut(QKeySequence("Ctrl+Shift+O"))
        self.add_folder_action.setStatusTip("Add every PDF in a folder and its subfolders")
        self.add_folder_action.triggered.connect(self._choose_folder)

        self.remove_action = QAction("&Remove from Library", self)
        self.remove_action.setShortcut(QKeySequence.StandardKey.Delete)
        self.remove_action.setStatusTip("Remove the selected papers from the library; the files stay on disk")
        self.remove_action.triggered.connect(self._remove_selected)

        self.cancel_action = QAction("Cancel", self)
        self.cancel_action.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        self.cancel_action.setToolTip("Stop adding papers (Esc); papers already added are kept")
        self.cancel_action.setEnabled(False)
        self.cancel_action.triggered.connect(self._cancel)
        self.addAction(self.cancel_action)  # the shortcut must work whether or not the bar is visible

        self.quit_action = QAction("&Quit", self)
        self.quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        self.quit_action.triggered.connect(self.close)

    def _create_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(self.add_files_action)
        file_menu.addAction(self.add_folder_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        library_menu = self.menuBar().addMenu("&Library")
        library_menu.addAction(self.remove_action)

    def _create_table(self) -> QTableView:
        table = QTableView(self)
        table.setModel(self._proxy)
        table.setAccessibleName("Library")
        table.setAccessibleDescription("The papers in your library")
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setAlternatingRowColors(True)
        table.setWordWrap(False)
        table.setShowGrid(False)
        table.verticalHeader().hide()
        table.setSortingEnabled(True)
        table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # the engine's order (oldest first) until asked
        header = table.horizontalHeader()
        header.setHighlightSections(False)
        header.setSectionResizeMode(Column.TITLE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(Column.AUTHORS, QHeaderView.ResizeMode.Interactive)
        for column in (Column.YEAR, Column.PAGES, Column.STATUS):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.resizeSection(Column.AUTHORS, 240)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        table.addAction(self.remove_action)
        return table

    def _connect_client(self) -> None:
        client = self._client
        client.documents_changed.connect(self.model.set_documents)
        client.progress.connect(self.ingest_progress.update_progress)
        client.ingesting_changed.connect(self._on_ingesting_changed)
        client.ingest_result.connect(self._on_ingest_result)
        client.cancelled.connect(self._on_cancelled)
        client.error.connect(self._on_error)

    # --- state -------------------------------------------------------------------------------

    def _restore_state(self) -> None:
        geometry = self._settings.value(_GEOMETRY)
        if not (isinstance(geometry, QByteArray) and self.restoreGeometry(geometry)):
            self.resize(1040, 660)
        state = self._settings.value(_STATE)
        if isinstance(state, QByteArray):
            self.restoreState(state)
        header = self._settings.value(_HEADER)
        if isinstance(header, QByteArray):
            self.table.horizontalHeader().restoreState(header)

    def _save_state(self) -> None:
        self._settings.setValue(_GEOMETRY, self.saveGeometry())
        self._settings.setValue(_STATE, self.saveState())
        self._settings.setValue(_HEADER, self.table.horizontalHeader().saveState())
        self._settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        self._save_state()
        super().closeEvent(event)

    def _update_page(self) -> None:
        showing_library = self.model.rowCount() > 0
        self.stack.setCurrentWidget(self.table if showing_library else self.empty_state)
        self._update_actions()

    def _update_actions(self) -> None:
        self.remove_action.setEnabled(self.table.selectionModel().hasSelection())

    # --- user gestures -----------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        self._accept_if_local(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        self._accept_if_local(event)

    def dropEvent(self, event: QDropEvent) -> None:
        paths = local_paths(event.mimeData())
        if not paths:
            event.ignore()
            return
        # We read the files where they are; never let the source move or delete them.
        event.setDropAction(Qt.DropAction.CopyAction)
        event.accept()
        self.add_paths(paths)

    @staticmethod
    def _accept_if_local(event: QDragMoveEvent) -> None:
        if local_paths(event.mimeData()):
            event.setDropAction(Qt.DropAction.CopyAction)
            event.accept()
        else:
            event.ignore()

    def _choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Add PDFs", self._last_folder(),
                                                "PDF files (*.pdf *.PDF);;All files (*)")
        if files:
            self._settings.setValue(_LAST_FOLDER, str(Path(files[0]).parent))
            self.add_paths(files)

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a Folder of PDFs", self._last_folder())
        if folder:
            self._settings.setValue(_LAST_FOLDER, folder)
            self.add_paths([folder])

    def _last_folder(self) -> str:
        return str(self._settings.value(_LAST_FOLDER, str(Path.home())))

    def _remove_selected(self) -> None:
        doc_ids = self.selected_doc_ids()
        for doc_id in doc_ids:
            self._client.remove(doc_id)
        if len(doc_ids) == 1:
            row = self.model.row_of(doc_ids[0])
            name = display_title(self.model.document(row)) if row is not None else doc_ids[0]
            self.statusBar().showMessage(f"Removing “{name}” from the library…", _MESSAGE_MS)
        elif doc_ids:
            self.statusBar().showMessage(f"Removing {len(doc_ids)} papers from the library…", _MESSAGE_MS)

    def _cancel(self) -> None:
        self._client.cancel()
        self.ingest_progress.set_cancelling()

    # --- engine reports ----------------------------------------------------------------------

    def _on_ingesting_changed(self, ingesting: bool) -> None:
        self.cancel_action.setEnabled(ingesting)
        if ingesting:
            self._outcomes.clear()
            self._was_cancelled = False
            self.ingest_progress.start()
            return
        self.ingest_progress.stop()
        if not self._was_cancelled:
            self.statusBar().showMessage(summarize(self._outcomes), _MESSAGE_MS)

    def _on_ingest_result(self, result: IngestResult) -> None:
        self._outcomes[result.outcome] += 1

    def _on_cancelled(self, message: str) -> None:
        self._was_cancelled = True
        self.statusBar().showMessage(message, _MESSAGE_MS)

    def _on_error(self, message: str) -> None:
        errors.show_error(self, message)
