"""The viewer's Tables menu on a real library: a PyMuPDF-written paper with a ruled and a booktabs table is
ingested, opened, and its tables copied (the clipboard read back cell by cell) and exported (the file
read back cell by cell); a paper without tables and a file that cannot be written say so."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from fixtures.pdfs import text_pdf
from fixtures.table_pdfs import RULED, UNRULED, tables_and_figure_pdf
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from engine.render.tables import DocumentTable
from ui.engine_client import EngineClient
from ui.main_window import MainWindow
from ui.table_export import FILTERS, NO_TABLES, TableExport, format_for, menu_label, suggested_name

TIMEOUT_MS = 120_000
CSV_FILTER, MARKDOWN_FILTER = list(FILTERS)


@pytest.fixture
def quiet_window(qtbot: QtBot, client: EngineClient, window_settings: QSettings,
                 shown_errors: list[str]) -> MainWindow:
    """The main window without background embedding: tables need no embedder."""
    window = MainWindow(client, window_settings, progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    return window


def add_and_open(qtbot: QtBot, window: MainWindow, client: EngineClient, pdf: Path) -> str:
    """Ingest ``pdf`` as a user would, then open it by double-click; the paper's id."""
    before = window.model.rowCount()
    window.add_paths([pdf])
    qtbot.waitUntil(lambda: window.model.rowCount() == before + 1 and not client.busy, timeout=TIMEOUT_MS)
    document = next(d for d in window.model.documents() if d.path == str(pdf.resolve()))
    window.library.open_requested.emit(document.id)
    assert window.viewer.path == document.path
    return document.id


def opened_with_tables(qtbot: QtBot, window: MainWindow, client: EngineClient, tmp_path: Path) -> TableExport:
    add_and_open(qtbot, window, client, tables_and_figure_pdf(tmp_path / "scores.pdf"))
    export = window.table_export
    qtbot.waitUntil(lambda: len(export.tables) == 2, timeout=TIMEOUT_MS)
    return export


def action(export: TableExport, label: str, text: str) -> QAction:
    """The action ``text`` of the table whose menu entry starts with ``label``, as the menu offers it."""
    submenu = next(a.menu() for a in export.menu.actions() if a.text().startswith(label + " "))
    return next(a for a in submenu.actions() if a.text() == text)


def markdown_cells(text: str) -> list[list[str]]:
    """The rows of a Markdown table, each as its cells, without the |---| line."""
    rows = [line for line in text.splitlines() if line.startswith("|") and not line.startswith("|---")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in rows]


def test_the_menu_lists_the_papers_tables_and_copies_them_cell_by_cell(
        qtbot: QtBot, quiet_window: MainWindow, client: EngineClient, tmp_path: Path) -> None:
    export = opened_with_tables(qtbot, quiet_window, client, tmp_path)
    assert export.button.isEnabled() and export.button in quiet_window.viewer.toolbar_buttons
    assert [a.text() for a in export.menu.actions()] == [
        "Table 1 — Citation prediction scores of the three models. (page 1)",
        "Table 2 — Response by dose in the trial. (page 1)"]
    assert "(2)" in export.button.toolTip()

    quiet_window.viewer.go_to_page(2)  # the figure's page: copying a table shows the table's page
    action(export, "Table 1", "Copy as CSV").trigger()
    assert quiet_window.viewer.current_page == 1
    assert list(csv.reader(io.StringIO(QGuiApplication.clipboard().text()))) == RULED
    assert quiet_window.statusBar().currentMessage() == "Copied Table 1 (3 rows) as CSV."

    action(export, "Table 2", "Copy as Markdown").trigger()
    copied = QGuiApplication.clipboard().text()
    assert copied.splitlines()[0] == "**Table 2 (page 1)** Table 2: Response by dose in the trial."
    assert markdown_cells(copied) == UNRULED

    quiet_window.viewer.go_to_page(2)
    action(export, "Table 2", "Show page 1").trigger()
    assert quiet_window.viewer.current_page == 1


def test_export_writes_csv_or_markdown_by_the_suffix_else_the_filter(
        qtbot: QtBot, quiet_window: MainWindow, client: EngineClient, tmp_path: Path, monkeypatch: Any) -> None:
    export = opened_with_tables(qtbot, quiet_window, client, tmp_path)
    asked: list[str] = []

    def save_as(path: Path, chosen: str) -> None:
        def answer(_parent: object, _caption: str, suggested: str, _filters: str) -> tuple[str, str]:
            asked.append(suggested)
            return str(path), chosen
        monkeypatch.setattr(QFileDialog, "getSaveFileName", answer)

    out = tmp_path / "out"
    out.mkdir()
    save_as(out / "ruled", CSV_FILTER)  # no suffix typed: the filter's is added
    action(export, "Table 1", "Export…").trigger()
    assert asked[-1] == str(Path.home() / "scores-table-1.csv")
    assert list(csv.reader(io.StringIO((out / "ruled.csv").read_text(encoding="utf-8")))) == RULED

    save_as(out / "dose.md", CSV_FILTER)  # the suffix typed wins over the filter left as it was
    action(export, "Table 2", "Export…").trigger()
    assert asked[-1] == str(out / "scores-table-2.csv")  # the next export starts in the last one's folder
    written = (out / "dose.md").read_text(encoding="utf-8")
    assert markdown_cells(written) == UNRULED
    assert quiet_window.statusBar().currentMessage() == "Saved Table 2 as Markdown to dose.md."

    save_as(out / "dose-again", MARKDOWN_FILTER)
    action(export, "Table 2", "Export…").trigger()
    assert (out / "dose-again.md").read_text(encoding="utf-8") == written
    assert sorted(p.name for p in out.iterdir()) == ["dose-again.md", "dose.md", "ruled.csv"]

    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: ("", ""))  # cancelled
    action(export, "Table 1", "Export…").trigger()
    assert sorted(p.name for p in out.iterdir()) == ["dose-again.md", "dose.md", "ruled.csv"]


def test_a_file_that_cannot_be_written_is_said_and_leaves_nothing_behind(
        qtbot: QtBot, quiet_window: MainWindow, client: EngineClient, tmp_path: Path, monkeypatch: Any,
        shown_errors: list[str]) -> None:
    export = opened_with_tables(qtbot, quiet_window, client, tmp_path)
    missing = tmp_path / "no such folder" / "table.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(missing), CSV_FILTER))
    action(export, "Table 1", "Export…").trigger()
    assert len(shown_errors) == 1 and shown_errors[0].startswith(f"Could not save Table 1 to {missing}: ")
    assert "copy the table instead" in shown_errors[0]
    assert not missing.parent.exists()
    shown_errors.clear()

    taken = tmp_path / "taken.csv"  # a folder of that name: the write succeeds, putting it in place cannot
    (taken / "inside.txt").parent.mkdir()
    (taken / "inside.txt").write_text("kept", encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(taken), CSV_FILTER))
    action(export, "Table 1", "Export…").trigger()
    assert len(shown_errors) == 1 and shown_errors[0].startswith(f"Could not save Table 1 to {taken}: ")
    shown_errors.clear()
    assert (taken / "inside.txt").read_text(encoding="utf-8") == "kept"
    assert not (tmp_path / "taken.csv.part").exists()
    # Nothing is lost: copying still works after a failed save.
    action(export, "Table 1", "Copy as CSV").trigger()
    assert list(csv.reader(io.StringIO(QGuiApplication.clipboard().text()))) == RULED


def test_a_paper_without_tables_disables_the_button_and_says_why(
        qtbot: QtBot, quiet_window: MainWindow, client: EngineClient, tmp_path: Path) -> None:
    export = opened_with_tables(qtbot, quiet_window, client, tmp_path)
    plain = text_pdf(tmp_path / "plain.pdf", ["Retrieval systems should cite the passages they rely on.\n"
                                              "This paper has prose and no table at all."])
    add_and_open(qtbot, quiet_window, client, plain)
    qtbot.waitUntil(lambda: export.button.toolTip() == NO_TABLES, timeout=TIMEOUT_MS)
    assert not export.button.isEnabled() and export.tables == () and export.menu.actions() == []

    scores = next(d for d in quiet_window.model.documents() if d.path.endswith("scores.pdf"))
    quiet_window.library.open_requested.emit(scores.id)  # back to the paper with tables
    qtbot.waitUntil(lambda: len(export.tables) == 2, timeout=TIMEOUT_MS)
    assert export.button.isEnabled()


def table(label: str, caption: str, page: int = 3) -> DocumentTable:
    return DocumentTable(0, label, caption, page, ("a", "b"), (("1", "2"),))


def test_menu_labels_file_names_and_formats() -> None:
    assert menu_label(table("Table 2", "Table 2: Results & ablations.")) == \
        "Table 2 — Results && ablations. (page 3)"  # "&" shown, not taken as a shortcut
    assert menu_label(table("", "")) == "Table 1 (page 3)"
    long = menu_label(table("Table 4", "Table 4. " + "word " * 40))
    assert long.startswith("Table 4 — word word") and long.endswith("… (page 3)") and len(long) < 90
    assert suggested_name("/papers/Smith 2020.pdf", table("Table A.1", "")) == "Smith 2020-table-a-1"
    assert format_for("/x/t.MD", CSV_FILTER) == ("markdown", "/x/t.MD")
    assert format_for("/x/t.csv", MARKDOWN_FILTER) == ("csv", "/x/t.csv")
    assert format_for("/x/t.txt", MARKDOWN_FILTER) == ("markdown", "/x/t.txt.md")
    assert format_for("/x/t", "") == ("csv", "/x/t.csv")
