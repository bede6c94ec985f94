"""Connects the table of papers window to the engine client and the viewer: building a table in a
scope, rows as they come, Stop (finished rows stay), a click on a cell showing its quote in the PDF,
and export as CSV or Markdown."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMainWindow

from engine.render.paper_table import stopped_note, to_csv, to_markdown
from engine.table_types import PaperRow, PaperTable, TableCell
from engine.types import LIBRARY_SOURCE, Citation, Reference
from ui.answer_controller import export_file_name
from ui.engine_client import EngineClient
from ui.engine_tasks import PassageLocation
from ui.pdf_viewer import PdfViewer
from ui.table_window import TableWindow

_MESSAGE_MS = 8000
_EXPORTS = {"csv": ("Export the table as CSV", "CSV (*.csv)", ".csv", to_csv),
            "markdown": ("Export the table as Markdown", "Markdown (*.md)", ".md", to_markdown)}


def cell_reference(row: PaperRow, cell: TableCell) -> tuple[Reference, Citation]:
    """The passage and quote behind a cell, as the viewer's lookup takes them."""
    reference = Reference(1, cell.passage_id, row.doc_id, LIBRARY_SOURCE, row.bib, cell.quote, page=cell.page)
    citation = Citation(1, cell.passage_id, cell.quote, cell.quote_start, cell.quote_end, 1.0, cell.rects)
    return reference, citation


class TableController(QObject):
    def __init__(self, client: EngineClient, viewer: PdfViewer, window: QMainWindow) -> None:
        super().__init__(window)
        self._client, self._viewer, self._main = client, viewer, window
        self.window = TableWindow(window)
        self.window.set_columns(client.default_table_columns())
        self.table: PaperTable | None = None
        self._doc_ids: list[str] | None = None
        self._request = 0  # the table being built; rows of an earlier, stopped one are not shown
        self._export_folder = str(Path.home())
        self.window.build_requested.connect(self.build)
        self.window.cancel_requested.connect(self.cancel)
        self.window.export_requested.connect(self.export)
        self.window.quote_requested.connect(self.show_quote)
        client.table_row.connect(self._on_row)
        client.table_progress.connect(self._on_progress)

    def _status(self, message: str) -> None:
        self._main.statusBar().showMessage(message, _MESSAGE_MS)
        self.window.notice_label.setText(message)

    def open(self, question: str, doc_ids: list[str] | None, scope_label: str) -> None:
        """Show the window for ``question`` over ``doc_ids`` (None: the whole library) and start building."""
        self._doc_ids = doc_ids
        count = f" ({len(doc_ids)} papers)" if doc_ids is not None else ""
        self.window.scope_label.setText(f"Scope: {scope_label}{count}")
        self.window.question_box.setText(question)
        self.window.show()
        self.window.raise_()
        self.window.activateWindow()
        if question:
            self.build()

    def build(self) -> None:
        question = self.window.question_box.text().strip()
        if not question:
            self._status("Type the question each paper's row should answer.")
            return
        if self._client.asking:
            self._status("Still answering a question or building a table; stop it first (Esc).")
            return
        if self._doc_ids is not None and not self._doc_ids:
            self._status("No paper is in scope: select papers, or choose a wider scope, and build again.")
            return
        columns = self.window.columns()
        self.window.model.reset(columns)
        self.window.notice_label.clear()
        self.table = None
        self.window.set_building(True)
        self.window.set_progress("screening", 0, len(self._doc_ids) if self._doc_ids is not None else 0)
        self._request = self._client.table(question, columns, self._finished, doc_ids=self._doc_ids,
                                           mode=self.window.mode(), on_failure=self._failed)

    def cancel(self) -> None:
        if self.window.building:
            self._client.cancel_answer()
            self.window.progress_label.setText("Stopping after the paper being read\u2026")

    def _on_row(self, request: int, row: PaperRow) -> None:
        if request == self._request and self.window.building:
            self.window.model.add_row(row)

    def _on_progress(self, request: int, stage: str, done: int, total: int) -> None:
        if request == self._request:
            self.window.set_progress(stage, done, total)

    def _finished(self, table: PaperTable) -> None:
        self.table = table
        self.window.model.reset(table.columns, table.rows)  # the engine's order: best-addressing paper first
        self.window.set_building(False)
        self.window.set_progress("table", table.papers_read, table.papers_addressing)
        parts = [table.notice, stopped_note(table) if table.cancelled else ""]
        self.window.notice_label.setText(" ".join(p for p in parts if p))

    def _failed(self) -> None:
        self.window.set_building(False)
        self.window.notice_label.setText("The table could not be built: see the message for why.")

    def show_quote(self, row: PaperRow, cell: TableCell) -> None:
        reference, citation = cell_reference(row, cell)
        self._client.locate(reference, citation, self._show_location)

    def _show_location(self, location: PassageLocation) -> None:
        if location.path:
            self._viewer.show_passage(location.path, location.page, location.passage_rects, location.quote_rects,
                                      title=location.reference.bib.title)
            self._main.raise_()
        elif location.removed:
            self._status(f"{location.reference.bib.title or 'This paper'} was removed from the library.")

    def export(self, kind: str) -> None:
        if self.table is None or kind not in _EXPORTS:
            return
        caption, file_filter, suffix, render = _EXPORTS[kind]
        suggested = Path(self._export_folder) / export_file_name(self.table.question, suffix)
        path, _ = QFileDialog.getSaveFileName(self.window, caption, str(suggested), file_filter)
        if not path:
            return
        self._export_folder = str(Path(path).parent)
        try:
            Path(path).write_text(render(self.table), encoding="utf-8")
        except OSError as exc:
            self._client.error.emit(f"Could not write {path}: {exc.strerror or exc}. Choose another folder.")
            return
        self._status(f"Saved {Path(path).name}.")
