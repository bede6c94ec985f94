"""The viewer's Tables button: the open paper's own tables, as ingest read them, each to copy as
Markdown or CSV or to save as a file. The text is what `quire library show ID --tables` prints, so
a table pasted from the app and one exported from the command line are the same.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QMenu, QToolButton, QWidget

from engine.render.tables import DocumentTable, table_csv, table_markdown
from ui import errors
from ui.engine_client import EngineClient
from ui.engine_tasks import FileTables
from ui.pdf_viewer import PdfViewer

MARKDOWN, CSV = "markdown", "csv"
STYLE_NAMES = {MARKDOWN: "Markdown", CSV: "CSV"}
# Filter shown in the save dialog -> the style written and its suffix.
FILTERS: dict[str, tuple[str, str]] = {"CSV — spreadsheets (*.csv)": (CSV, ".csv"),
                                       "Markdown (*.md)": (MARKDOWN, ".md")}
SUFFIXES = {".csv": CSV, ".md": MARKDOWN, ".markdown": MARKDOWN}
READING = "Reading this paper's tables…"
NO_TABLES = ("No tables were read as tables in this paper (their text stays searchable). A paper added before "
             "Quire read tables has them once it is added again.")
NOT_IN_LIBRARY = "This PDF is not in the library, so its tables were not read."
READ_FAILED = "This paper's tables could not be read (the message shown said why); turn the page to try again."
_CAPTION_CHARS = 60  # a menu as wide as a long caption would cover the page


def table_text(table: DocumentTable, style: str) -> str:
    return table_csv(table) if style == CSV else table_markdown(table)


def table_name(table: DocumentTable) -> str:
    return table.label or f"Table {table.number + 1}"


def menu_label(table: DocumentTable) -> str:
    """"Table 2 — Response by dose in the trial. (page 3)": the caption once, shortened, without its label."""
    caption = " ".join(table.caption.split())
    if table.label and caption.casefold().startswith(table.label.casefold()):
        caption = caption[len(table.label):].lstrip(" :.-—–")  # the caption repeats the label
    if len(caption) > _CAPTION_CHARS:
        caption = caption[:_CAPTION_CHARS - 1].rstrip() + "…"
    text = f"{table_name(table)} — {caption}" if caption else table_name(table)
    return f"{text} (page {table.page})".replace("&", "&&")  # a caption's "&" is no menu shortcut


def format_for(path: str, chosen_filter: str) -> tuple[str, str]:
    """The style to write and the path to write it to: a typed suffix decides, else the chosen filter
    (whose suffix is then added, as not every platform's dialog adds it)."""
    style = SUFFIXES.get(Path(path).suffix.lower())
    if style is not None:
        return style, path
    style, suffix = FILTERS.get(chosen_filter, next(iter(FILTERS.values())))
    return style, path + suffix


def suggested_name(pdf_path: str, table: DocumentTable) -> str:
    """"paper-table-2": the paper's file name and the table's label, safe on every file system."""
    slug = re.sub(r"[^\w]+", "-", table_name(table).casefold()).strip("-") or "table"
    return f"{Path(pdf_path).stem or 'paper'}-{slug}"


def write_file(path: Path, text: str) -> None:
    """Write ``text`` whole or not at all: a full disk or a lost drive must not leave a file that was
    there before cut short. Line ends are written as they are ("\\n"), as the CLI prints them."""
    partial = path.with_name(path.name + ".part")
    try:
        partial.write_text(text, encoding="utf-8", newline="")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def _item(menu: QMenu, text: str, work: Callable[[], None]) -> None:
    """An entry of a table's menu; ``triggered`` passes a checked flag, which ``work`` does not take."""
    def run(_checked: bool = False) -> None:
        work()
    menu.addAction(text).triggered.connect(run)


class TableExport(QObject):
    """The Tables button of a viewer: follows the paper shown, lists its tables, copies and saves them."""

    def __init__(self, client: EngineClient, viewer: PdfViewer, notify: Callable[[str], None],
                 parent: QWidget) -> None:
        super().__init__(parent)
        self._client, self._viewer, self._notify, self._window = client, viewer, notify, parent
        self._asked = ""  # the PDF whose tables were asked for last
        self._listed = ""  # the PDF whose tables the menu lists
        self.tables: tuple[DocumentTable, ...] = ()
        self.folder = Path.home()  # where the next export is suggested; the last one's folder once there was one
        self.button = QToolButton(viewer.toolbar)
        self.button.setText("Tables")
        self.button.setAccessibleName("Tables")
        self.button.setAutoRaise(True)
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = QMenu(self.button)
        self.button.setMenu(self.menu)
        self._set_state((), READING)
        viewer.add_tool(self.button)
        viewer.page_changed.connect(self._on_page)
        # A paper added again (now read with its tables) or removed: ask again for the one shown.
        client.documents_changed.connect(lambda _documents: self._ask(self._viewer.path))

    # --- following the viewer ------------------------------------------------------------------

    def _on_page(self, _page: int) -> None:
        if self._viewer.path != self._asked:
            self._ask(self._viewer.path)

    def _ask(self, path: str) -> None:
        self._asked = path
        if not path:
            return
        if path != self._listed:  # never offer the last paper's tables for this one, even for a moment
            self._set_state((), READING)
        self._client.tables_in_file(path, self._on_tables, self._on_failure)

    def _on_tables(self, found: FileTables) -> None:
        if found.path != self._viewer.path:
            return  # another paper was opened while these were read
        self._set_state(found.tables, NO_TABLES if found.in_library else NOT_IN_LIBRARY)
        self._listed = found.path

    def _on_failure(self) -> None:
        self._asked = self._listed = ""  # the next page turned asks again
        self._set_state((), READ_FAILED)

    def _set_state(self, tables: tuple[DocumentTable, ...], why_none: str) -> None:
        self.tables = tables
        self.menu.clear()
        for table in tables:
            submenu = self.menu.addMenu(menu_label(table))
            _item(submenu, f"Show page {table.page}", partial(self._show, table))
            submenu.addSeparator()
            _item(submenu, "Copy as Markdown", partial(self.copy, table, MARKDOWN))
            _item(submenu, "Copy as CSV", partial(self.copy, table, CSV))
            _item(submenu, "Export…", partial(self.export, table))
        self.button.setEnabled(bool(tables))
        self.button.setToolTip(f"Copy or save this paper's tables ({len(tables)}) as Markdown or CSV"
                               if tables else why_none)

    # --- the actions ---------------------------------------------------------------------------

    def copy(self, table: DocumentTable, style: str) -> None:
        """Put the table on the clipboard as Markdown or CSV, and show it on its page."""
        self._show(table)
        QGuiApplication.clipboard().setText(table_text(table, style))
        self._notify(f"Copied {table_name(table)} ({len(table.rows)} rows) as {STYLE_NAMES[style]}.")

    def export(self, table: DocumentTable) -> None:
        """Ask where, then save the table as CSV or Markdown (by the suffix typed, else the filter chosen)."""
        self._show(table)
        suggested = self.folder / (suggested_name(self._viewer.path, table) + ".csv")
        path, chosen = QFileDialog.getSaveFileName(self._window, f"Export {table_name(table)}", str(suggested),
                                                   ";;".join(FILTERS))
        if not path:
            return
        style, path = format_for(path, chosen)
        try:
            write_file(Path(path), table_text(table, style))
        except OSError as exc:
            errors.show_error(self._window, f"Could not save {table_name(table)} to {path}: {exc.strerror or exc}."
                              "\n\nNothing was written there and any file already there is as it was. Choose "
                              "another folder, or copy the table instead.")
            return
        self.folder = Path(path).parent
        self._notify(f"Saved {table_name(table)} as {STYLE_NAMES[style]} to {Path(path).name}.")

    def _show(self, table: DocumentTable) -> None:
        if self._viewer.path and self._viewer.current_page != table.page:
            self._viewer.go_to_page(table.page)
