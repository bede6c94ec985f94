"""The main window: library, question/answer and PDF viewer panes in splitters, menus, and the
wiring from user gestures to :class:`EngineClient` requests and back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDragMoveEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import QDialog, QFileDialog, QInputDialog, QLabel, QMainWindow, QMessageBox, QSplitter, QWidget

from engine.progress import Pace
from engine.types import Answer, IngestResult, Outcome
from ui import errors, reference_export
from ui.answer_controller import AnswerController
from ui.ask_pane import SELECTED, AskPane
from ui.collection_scope import COLLECTION
from ui.engine_client import EngineClient
from ui.help_menu import add_help_menu
from ui.ingest_progress import IngestProgress, plural, summarize
from ui.library_model import display_title
from ui.library_pane import LibraryPane
from ui.link_opener import LinkOpener
from ui.metadata_dialog import MetadataDialog
from ui.pdf_viewer import PdfViewer
from ui.table_controller import TableController
from ui.table_export import TableExport
from ui.tool_dialogs import ToolDialogs
from ui.watch_dialog import WatchDialog
from ui.watch_follower import WatchFollower
from ui.window_state import restore_state, save_state

_LAST_FOLDER = "paths/last_folder"
_MESSAGE_MS = 8000
# The stages of attaching a datastore, as the status bar names them.
DATASTORE_STAGES = {"import": "reading", "bm25": "indexing words"}


def local_paths(mime: QMimeData) -> list[str]:
    """The local files and folders in dropped data; remote URLs are not ours to fetch."""
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile() and url.toLocalFile()]


class MainWindow(QMainWindow):
    """Shows the library, the answers and the PDFs, and turns gestures into engine requests."""

    def __init__(self, client: EngineClient, settings: QSettings, parent: QWidget | None = None, *,
                 progress_delay_ms: int = 400, background_embedding: bool = True, watch_ms: int = 1000) -> None:
        super().__init__(parent)
        self._client = client
        self._settings = settings
        self._background_embedding = background_embedding
        self._outcomes: Counter[str] = Counter()
        self._embedding_docs: set[str] = set()
        self._removing: set[str] = set()  # removals asked for here: they need no word about another program
        self._was_cancelled = False
        self._export_folder = Path.home()
        self.dialogs = ToolDialogs(self, client, lambda text: self.statusBar().showMessage(text, _MESSAGE_MS),
                                   self.refresh_datastores)
        self.setWindowTitle("Quire")
        self.setAcceptDrops(True)

        self._create_actions()
        self.library = LibraryPane(self.add_files_action, self.remove_action, self, self.demo_action)
        self.ask_pane = AskPane(self.ask_action, self)
        self.viewer = PdfViewer(self)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.setChildrenCollapsible(False)
        for pane in (self.library, self.ask_pane, self.viewer):
            self.splitter.addWidget(pane)
        self.setCentralWidget(self.splitter)
        # The library's widgets, named as before for callers and tests.
        self.model, self.table, self.stack = self.library.model, self.library.table, self.library.stack
        self.empty_state = self.library.empty_state
        self._create_menus()

        self._pace = Pace()
        self._adding_from = ""  # "From “papers”" while a folder is being added
        self.embedding_status = QLabel(self)
        self.embedding_status.setTextFormat(Qt.TextFormat.PlainText)
        self.embedding_status.setAccessibleName("Embedding status")
        self.embedding_status.setToolTip("Papers are searchable by keyword at once; embedding adds search by meaning")
        self.embedding_status.hide()
        self.statusBar().addPermanentWidget(self.embedding_status)
        self.ingest_progress = IngestProgress(self.cancel_action, self, show_delay_ms=progress_delay_ms)
        self.statusBar().addPermanentWidget(self.ingest_progress)
        self.ingest_progress.hide()
        self.answers = AnswerController(client, self.ask_pane, self.viewer, self.library, self)
        self.tables = TableController(client, self.viewer, self)
        self.watch_follower = WatchFollower(client, self)
        self.watch_follower.notice.connect(lambda text: self.statusBar().showMessage(text, _MESSAGE_MS))
        self.links = LinkOpener(client, self.viewer, lambda text: self.statusBar().showMessage(text, _MESSAGE_MS), self)
        self.table_export = TableExport(client, self.viewer,
                                        lambda text: self.statusBar().showMessage(text, _MESSAGE_MS), self)
        self.ask_pane.collection_names = self.library.collection_names

        self.library.selection_changed.connect(self._update_actions)
        self.library.open_requested.connect(self._open_document)
        self.library.edit_requested.connect(self._edit_document)
        self.viewer.failed.connect(self._on_error)
        self._connect_client()
        restore_state(self, self.splitter, self.library, self.ask_pane, self._settings)
        self._update_actions()
        client.watch_library(watch_ms)  # the CLI, the MCP server or a watched folder may change it meanwhile
        client.refresh()
        self.watch_follower.start()  # catches up with the watched folders, then follows them
        self.answers.refresh_history()
        self.refresh_datastores()
        if background_embedding:
            client.embed_pending()
        if client.settings_notice:  # settings lost without a word would look like Quire forgot them
            QTimer.singleShot(0, self._show_settings_notice)  # once the window is up, over it

    # --- public ------------------------------------------------------------------------------

    def add_paths(self, paths: Sequence[str | Path]) -> None:
        """Queue files and folders for ingestion; the status bar says at once what is being looked through, and
        when it is done, what was added from where."""
        if paths:
            folders = [Path(p).name or str(p) for p in paths if Path(p).is_dir()]
            self._adding_from = f"From “{folders[0]}”" if len(folders) == 1 else \
                f"From {len(folders)} folders" if folders else ""
            if folders:
                self.statusBar().showMessage(f"{self._adding_from}: looking for PDFs…", _MESSAGE_MS)
            self._client.add_paths(paths)

    def open_links(self, urls: Sequence[str]) -> None:
        """Open ``quire://open`` links in the viewer (the last one stays in view)."""
        for url in urls:
            self.links.open(url)

    def selected_doc_ids(self) -> list[str]:
        return self.library.selected_doc_ids()

    def refresh_datastores(self) -> None:
        self._client.list_datastores(self.library.set_datastores)
        self._client.list_server_datastores(self.ask_pane.set_server_datastores)

    # --- construction ------------------------------------------------------------------------

    def _action(self, text: str, tip: str, shortcut: QKeySequence | None, slot: object) -> QAction:
        action = QAction(text, self)
        action.setStatusTip(tip)
        action.setToolTip(tip)
        if shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(slot)
        return action

    def _create_actions(self) -> None:
        self.add_files_action = self._action("&Add PDFs…", "Add PDF files to the library",
                                             QKeySequence(QKeySequence.StandardKey.Open), self._choose_files)
        self.add_folder_action = self._action("Add &Folder…", "Add every PDF in a folder and its subfolders",
                                              QKeySequence("Ctrl+Shift+O"), self._choose_folder)
        self.remove_action = self._action("&Remove from Library",
                                          "Remove the selected papers from the library; the files stay on disk",
                                          QKeySequence(QKeySequence.StandardKey.Delete), self._remove_selected)
        self.demo_action = self._action(
            "Add the &Demo Papers", "Add four sample papers (CC BY 4.0); the sample datastore if its box is ticked",
            None, self._add_demo)
        self.edit_action = self._action("&Edit Details…",
                                        "Correct the selected paper's title, authors, year, venue or DOI",
                                        None, lambda: self._edit_document(""))
        self.export_action = self._action("E&xport References…", "Save the selected papers' references (all papers "
                                          "when none is selected) as BibTeX, RIS or CSL-JSON", None,
                                          self._export_references)
        self.zotero_action = self._action("Import from &Zotero…",
                                          "Add the PDFs of your Zotero library with their Zotero details and "
                                          "collections (Zotero's database is only read)", None, self._import_zotero)
        self.watch_action = self._action("&Watched Folders…", "Folders whose new and changed PDFs come into the "
                                         "library by themselves", None, self._open_watched_folders)
        self.ask_action = self._action("&Ask", "Ask the question (Enter in the question box, or Ctrl+Enter)",
                                       None, lambda: self._ask())
        self.ask_action.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
        self.table_action = self._action("Ask for a &Table…", "A table of papers: a row per paper in scope that "
                                         "addresses the question, a column per question you choose, each cell backed "
                                         "by a quote (exportable as CSV; Ctrl+Shift+Enter)",
                                         QKeySequence("Ctrl+Shift+Return"), self._ask_table)
        self.check_action = self._action("Check a &Claim…", "Find passages that support or contradict the selected "
                                         "text, or a sentence you type (Ctrl+Shift+K)", QKeySequence("Ctrl+Shift+K"),
                                         self._check_claim)
        self.cancel_action = self._action("Cancel", "Stop what is running (Esc); finished work is kept",
                                          QKeySequence(Qt.Key.Key_Escape), self._cancel)
        self.cancel_action.setEnabled(False)
        self.settings_action = self._action("&Settings…", "Model, embedder, threads and answer options",
                                            QKeySequence(QKeySequence.StandardKey.Preferences),
                                            self.dialogs.open_settings)
        self.quit_action = self._action("&Quit", "Quit Quire", QKeySequence(QKeySequence.StandardKey.Quit), self.close)
        self.find_action = self._action("&Find in Paper…", "Find words in the paper open in the viewer",
                                        QKeySequence(QKeySequence.StandardKey.Find),
                                        lambda: self.viewer.start_find())
        # Shortcuts must work whether or not a menu or button shows the action.
        for action in (self.ask_action, self.cancel_action, self.find_action):
            self.addAction(action)

    def _create_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(self.add_files_action)
        file_menu.addAction(self.add_folder_action)
        file_menu.addAction(self.zotero_action)
        file_menu.addAction(self.demo_action)
        file_menu.addSeparator()
        file_menu.addAction(self.settings_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        library_menu = self.menuBar().addMenu("&Library")
        library_menu.addAction(self.edit_action)
        library_menu.addAction(self.export_action)
        library_menu.addAction(self.remove_action)
        library_menu.addAction(self.watch_action)
        library_menu.addSeparator()
        library_menu.addAction(self.find_action)
        self.table.insertAction(self.remove_action, self.edit_action)  # the table's right-click menu
        ask_menu = self.menuBar().addMenu("&Question")
        ask_menu.addAction(self.ask_action)
        ask_menu.addAction(self.table_action)
        ask_menu.addAction(self.check_action)
        ask_menu.addAction(self.cancel_action)
        self.tools_menu = self.menuBar().addMenu("&Tools")
        self.models_action = self._action("&Models && Datastores…", "Install and choose models and datastores",
                                          None, self.dialogs.open_models)
        self.tools_menu.addAction(self.models_action)
        self.tools_menu.addAction(self.settings_action)
        self.help_menu = add_help_menu(self, [self.add_files_action, self.add_folder_action, self.remove_action,
                                              self.ask_action, self.cancel_action, self.find_action,
                                              self.settings_action, self.quit_action], self._client.home)

    def _connect_client(self) -> None:
        client = self._client
        client.documents_changed.connect(self._on_documents)
        client.library_changed.connect(self._on_library_changed)
        client.progress.connect(self._on_progress)
        client.ingesting_changed.connect(self._on_ingesting_changed)
        client.asking_changed.connect(lambda _: self._update_actions())
        client.ingest_result.connect(self._on_ingest_result)
        client.cancelled.connect(self._on_cancelled)
        client.error.connect(self._on_error)
        client.notice.connect(lambda message: QMessageBox.information(self, "Quire", message))
        client.job_finished.connect(self._on_job_finished)
        client.embedding_finished.connect(self._on_embedding_finished)

    # --- state -------------------------------------------------------------------------------

    def _open_watched_folders(self) -> None:
        WatchDialog(self._client, self.watch_follower, self).exec()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.watch_follower.stop()
        save_state(self, self.splitter, self.library, self._settings)
        super().closeEvent(event)

    def _update_actions(self) -> None:
        self.remove_action.setEnabled(self.table.selectionModel().hasSelection())
        self.edit_action.setEnabled(len(self.selected_doc_ids()) == 1)
        self.cancel_action.setEnabled(self._client.ingesting or self._client.asking)

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
        if not doc_ids:
            return
        if len(doc_ids) == 1:
            row = self.model.row_of(doc_ids[0])
            name = display_title(self.model.document(row)) if row is not None else doc_ids[0]
            question, progress = f"Remove “{name}” from the library?", f"Removing “{name}” from the library…"
        else:
            question = f"Remove {len(doc_ids)} papers from the library?"
            progress = f"Removing {len(doc_ids)} papers from the library…"
        if not errors.confirm(self, question, "The PDF files stay on disk; add them again any time. Past answers "
                                              "that cite them keep their quotes."):
            return
        # Nothing stays selected: a second Delete must not remove the next paper.
        self.table.clearSelection()
        for doc_id in doc_ids:
            self._removing.add(doc_id)
            self._client.remove(doc_id)
        self.statusBar().showMessage(progress, _MESSAGE_MS)

    def _edit_document(self, doc_id: str) -> None:
        """Correct a paper's details; the engine validates them and the error dialog names a bad field."""
        doc_id = doc_id or next(iter(self.selected_doc_ids()), "")
        row = self.model.row_of(doc_id) if doc_id else None
        if row is None:
            return
        dialog = MetadataDialog(self.model.document(row), self)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        changes = dialog.changes()

        def saved(document: object) -> None:
            self.statusBar().showMessage("Saved the paper's details; references and exports use them now.",
                                         _MESSAGE_MS)
            self._client.refresh()
        self._client.update_metadata(doc_id, saved, **changes)

    def _export_references(self) -> None:
        doc_ids = self.selected_doc_ids()
        count = len(doc_ids) or self.model.rowCount()
        folder = reference_export.export_library(self, self._client, doc_ids, count, self._export_folder,
                                                 lambda text: self.statusBar().showMessage(text, _MESSAGE_MS))
        self._export_folder = folder or self._export_folder

    def _import_zotero(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose your Zotero data folder (it holds zotero.sqlite)",
                                                  str(Path.home() / "Zotero"))
        if folder:
            self.import_zotero(folder)

    def import_zotero(self, folder: str) -> None:
        """Import a Zotero data folder; a summary goes to the status bar, problems to the error dialog."""
        self.statusBar().showMessage("Importing from Zotero…")

        def done(report: Any) -> None:
            summary = report.summary()
            self.statusBar().showMessage(summary, _MESSAGE_MS)
            if report.failed:
                details = "\n".join(f"{item}: {reason}" for item, reason in report.failed[:8])
                more = f"\n…and {len(report.failed) - 8} more." if len(report.failed) > 8 else ""
                self._on_error(f"{plural(len(report.failed), 'Zotero item')} could not be added:\n\n{details}{more}")
            self._client.refresh()
            if self._background_embedding and (report.added or report.updated):
                self._client.embed_pending()
        self._client.cancel_embedding()
        self._client.import_zotero(folder, done)

    def _add_demo(self) -> None:
        with_datastore = self.empty_state.demo_datastore_box.isChecked()
        if with_datastore:
            self.embedding_status.setText("Attaching the sample datastore…")
            self.embedding_status.show()

        def attached(_: object) -> None:
            self.embedding_status.hide()
            self.refresh_datastores()
        self._client.add_demo(attached, with_datastore=with_datastore)

    def _ask(self) -> None:
        self.statusBar().clearMessage()  # the last citation's "[3] … page 6" belongs to the last answer
        if self.answers.ask():
            self._update_actions()

    def _ask_table(self) -> None:
        """Open the table of papers for the question in the box, over the chosen scope's papers."""
        scope = self.ask_pane.scope()
        doc_ids = (self.library.selected_doc_ids() if scope == SELECTED else
                   self.library.collection_doc_ids(self.ask_pane.collection) if scope == COLLECTION else None)
        # A table reads the library's papers; datastore records have no PDF to quote from.
        label = "Library" if scope not in (SELECTED, COLLECTION) else self.ask_pane.scope_label()
        self.tables.open(self.ask_pane.question(), doc_ids, label)

    def _check_claim(self) -> None:
        """Check the text selected in the answer or the question box; else ask for a sentence."""
        claim = (self.ask_pane.answer_view.textCursor().selectedText()
                 or self.ask_pane.question_box.textCursor().selectedText()).replace("\u2029", " ").strip()
        if not claim:
            claim, ok = QInputDialog.getMultiLineText(self, "Check a claim",
                                                      "A sentence to check against your papers:")
            if not ok:
                return
        self.answers.check_claim(claim)

    def _cancel(self) -> None:
        if self._client.asking:
            self.answers.cancel()
            self.tables.cancel()
        if self._client.ingesting:
            self._client.cancel()
            self.ingest_progress.set_cancelling()

    def _open_document(self, doc_id: str) -> None:
        row = self.model.row_of(doc_id)
        if row is not None:
            document = self.model.document(row)
            self.viewer.open_document(document.path, title=display_title(document))

    # --- engine reports ----------------------------------------------------------------------

    def _on_library_changed(self) -> None:
        """Another process (or this app's other lane) changed the library: re-read the papers and the history."""
        self._client.refresh()
        self.answers.refresh_history()

    def _on_documents(self, documents: Sequence[Any]) -> None:
        """The library as it is now: rows follow it, and a paper removed by another program is said so and its
        PDF closed, rather than left on screen to fail when used."""
        kept = {document.id for document in documents}
        gone = [document for document in self.model.documents() if document.id not in kept]
        self.model.set_documents(documents)
        elsewhere = [document for document in gone if document.id not in self._removing]
        self._removing -= {document.id for document in gone}
        paths = {document.path for document in documents}
        if self.viewer.path and self.viewer.path not in paths and \
                any(document.path == self.viewer.path for document in gone):
            self.viewer.close_document()
        if elsewhere:
            names = (f"“{display_title(elsewhere[0])}” was" if len(elsewhere) == 1
                     else f"{len(elsewhere)} papers were")
            self.statusBar().showMessage(f"{names} removed from the library by another program.", _MESSAGE_MS)

    def _on_progress(self, stage: str, done: int, total: int, label: str) -> None:
        # The phases the CLI shows, with the same counts, rate and time left (engine.progress.Pace).
        if stage == "embed":
            counts = self._pace.counts("embed", done, total, "passages").replace("  ", " · ")
            self.embedding_status.setText(f"Embedding {counts}")
            self.embedding_status.setVisible(bool(total) and done < total and self._client.embedding)
            return
        if stage in DATASTORE_STAGES:  # the sample datastore being attached
            counts = self._pace.counts(stage, done, total, size=stage == "import").replace("  ", " · ")
            self.embedding_status.setText(f"Attaching the sample datastore: {DATASTORE_STAGES[stage]} {counts}")
            self.embedding_status.setVisible(done < total)
            return
        self.ingest_progress.update_progress(stage, done, total, label)

    def _on_ingesting_changed(self, ingesting: bool) -> None:
        self._update_actions()
        if ingesting:
            self._client.cancel_embedding()
            self._outcomes.clear()
            self._was_cancelled = False
            self.ingest_progress.start()
            return
        self.ingest_progress.stop()
        if not self._was_cancelled:
            summary = summarize(self._outcomes)
            if self._adding_from:  # a folder added: say which, and what came of it, until the next message
                summary = f"{self._adding_from}: {summary[0].lower()}{summary[1:]}"
            self.statusBar().showMessage(summary, 0 if self._adding_from else _MESSAGE_MS)
        self._adding_from = ""
        if self._background_embedding and self._outcomes[Outcome.ADDED] + self._outcomes[Outcome.UPDATED]:
            self._client.embed_pending()

    def _on_job_finished(self, kind: str) -> None:
        if kind in ("embed", "datastore"):
            self.embedding_status.hide()
        if kind == "ask" and self._background_embedding:
            self._client.embed_pending()  # resume what the question paused

    def _on_ingest_result(self, result: IngestResult) -> None:
        self._outcomes[result.outcome] += 1
        if self._background_embedding and result.outcome in (Outcome.ADDED, Outcome.UPDATED) and result.doc_id:
            self._embedding_docs.add(result.doc_id)
            self.model.set_embedding(self._embedding_docs)

    def _on_embedding_finished(self, complete: bool) -> None:
        if complete and not self._client.ingesting:
            self._embedding_docs.clear()
            self.model.set_embedding(self._embedding_docs)

    def _on_cancelled(self, message: str) -> None:
        self._was_cancelled = True
        self.statusBar().showMessage(message, _MESSAGE_MS)

    def _show_settings_notice(self) -> None:
        errors.show_error(self, self._client.settings_notice)

    def _on_error(self, message: str) -> None:
        errors.show_error(self, errors.for_the_app(message))

    def show_answer(self, answer: Answer) -> None:
        self.answers.show(answer)
