"""The table of papers as an item model: a row per paper, the paper's title first, then its cell per column.

Rows arrive one at a time while the engine reads the papers (:meth:`add_row`), and are replaced by
the engine's final order (best-addressing paper first) when it is done. Every cell shows the
engine's text as plain text; its tooltip is the verbatim quote and its page.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from engine.table_types import PaperRow, TableCell, TableColumn

_Index = QModelIndex | QPersistentModelIndex
PAPER_COLUMN = 0


def paper_label(row: PaperRow) -> str:
    bib = row.bib
    first = bib.authors[0].split()[-1] if bib.authors and bib.authors[0].split() else ""
    who = f"{first} et al." if len(bib.authors) > 1 and first else first
    details = ", ".join(str(part) for part in (who, bib.year) if part)
    return f"{bib.title} ({details})" if details else bib.title


class PaperTableModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.columns: tuple[TableColumn, ...] = ()
        self.rows: list[PaperRow] = []

    def reset(self, columns: Sequence[TableColumn], rows: Sequence[PaperRow] = ()) -> None:
        self.beginResetModel()
        self.columns = tuple(columns)
        self.rows = list(rows)
        self.endResetModel()

    def add_row(self, row: PaperRow) -> None:
        self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows))
        self.rows.append(row)
        self.endInsertRows()

    def cell(self, index: _Index) -> tuple[PaperRow, TableCell | None] | None:
        """The paper and its cell at ``index`` (None for the paper column), or None off the table."""
        if not index.isValid() or index.row() >= len(self.rows):
            return None
        row = self.rows[index.row()]
        column = index.column() - 1
        return row, (row.cells[column] if 0 <= column < len(row.cells) else None)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else 1 + len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation != Qt.Orientation.Horizontal:
            return str(section + 1) if role == Qt.ItemDataRole.DisplayRole else None
        if section == PAPER_COLUMN:
            return "Paper" if role == Qt.ItemDataRole.DisplayRole else None
        column = self.columns[section - 1] if 0 < section <= len(self.columns) else None
        if column is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return column.name
        if role == Qt.ItemDataRole.ToolTipRole:
            return column.question or "The table's question"
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        found = self.cell(index)
        if found is None:
            return None
        row, cell = found
        if cell is None:
            if role == Qt.ItemDataRole.DisplayRole:
                return paper_label(row)
            if role == Qt.ItemDataRole.ToolTipRole:
                return ", ".join(row.bib.authors) or row.bib.title
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return cell.text
        if role == Qt.ItemDataRole.ToolTipRole:
            if not cell.stated:
                return "Not stated in the passages of this paper that were read."
            page = f" (page {cell.page})" if cell.page is not None else ""
            how = "Written, and checked against" if cell.written else "Quoted from"
            return f"{how} the paper{page}: \u201c{' '.join(cell.quote.split())}\u201d\nClick to see it in the PDF."
        if not cell.stated and role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(QColor(128, 128, 128))
        if not cell.stated and role == Qt.ItemDataRole.FontRole:
            font = QFont()
            font.setItalic(True)
            return font
        return None
