"""The table of papers window: the question, the columns (add, remove, edit their questions), the
rows as they are read with progress and Stop, and export. It only shows and collects; the table
controller talks to the engine."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.table_types import PaperRow, TableCell, TableColumn
from ui.paper_table_model import PaperTableModel
from ui.window_state import fit_to_screen

# (engine mode, label): "auto" writes cells only with a model able to write sentences that hold up.
ROW_LINES = 4  # a cell's lines shown before its quote is cut (the tooltip has it whole)
CELL_MODES = (("auto", "Cells: automatic"), ("quotes", "Cells: the papers' own sentences"),
              ("write", "Cells: written by the model, each checked"))
_NAME, _QUESTION = 0, 1


class TableWindow(QWidget):
    build_requested = Signal()
    cancel_requested = Signal()
    export_requested = Signal(str)  # "csv" | "markdown"
    quote_requested = Signal(object, object)  # PaperRow, TableCell

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle("Table of papers \u2014 Quire")
        self.setAccessibleName("Table of papers")
        self.resize(1100, 760)  # fitted to the screen when shown
        self.building = False

        self.question_box = QLineEdit(self)
        self.question_box.setAccessibleName("Table question")
        self.question_box.setPlaceholderText("The question each paper's row answers")
        self.question_box.returnPressed.connect(self.build_requested)
        self.scope_label = QLabel(self)
        self.scope_label.setTextFormat(Qt.TextFormat.PlainText)
        self.mode_box = QComboBox(self)
        self.mode_box.setAccessibleName("Cells")
        for key, label in CELL_MODES:
            self.mode_box.addItem(label, key)
        self.build_button = QPushButton("Build table", self)
        self.build_button.setDefault(True)
        self.build_button.clicked.connect(self.build_requested)

        self.columns_editor = QTableWidget(0, 2, self)
        self.columns_editor.setAccessibleName("Columns")
        self.columns_editor.setHorizontalHeaderLabels(["Column", "Question its cells answer"])
        # Names whole ("Data / sample", never "Data / …"); the questions take the rest and elide.
        self.columns_editor.horizontalHeader().setSectionResizeMode(_NAME, QHeaderView.ResizeMode.ResizeToContents)
        self.columns_editor.horizontalHeader().setSectionResizeMode(_QUESTION, QHeaderView.ResizeMode.Stretch)
        self.columns_editor.verticalHeader().hide()
        self.columns_editor.verticalHeader().setDefaultSectionSize(self.fontMetrics().lineSpacing() + 10)
        self.add_column_button = QPushButton("Add column", self)
        self.add_column_button.clicked.connect(lambda: self._append_column(TableColumn("", ""), edit=True))
        self.remove_column_button = QPushButton("Remove column", self)
        self.remove_column_button.clicked.connect(self._remove_selected_columns)

        self.progress_bar = QProgressBar(self)
        self.progress_bar.setAccessibleName("Papers read")
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setMaximumHeight(10)
        self.progress_label = QLabel(self)
        self.progress_label.setTextFormat(Qt.TextFormat.PlainText)
        self.progress_label.setAccessibleName("Table progress")
        self.cancel_button = QPushButton("Stop", self)
        self.cancel_button.setToolTip("Stop reading papers; the rows finished so far are kept")
        self.cancel_button.clicked.connect(self.cancel_requested)
        stop = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        stop.activated.connect(self.cancel_requested)
        self.notice_label = QLabel(self)
        self.notice_label.setTextFormat(Qt.TextFormat.PlainText)
        self.notice_label.setWordWrap(True)
        self.notice_label.setAccessibleName("Table notice")

        self.model = PaperTableModel(self)
        self.view = QTableView(self)
        self.view.setAccessibleName("Table of papers")
        self.view.setModel(self.model)
        self.view.setWordWrap(True)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.view.horizontalHeader().setDefaultSectionSize(220)
        self.view.horizontalHeader().setStretchLastSection(True)
        # Each new row is sized once, as it arrives: ResizeToContents would measure every row again on
        # each insertion (200 rows took 15 s, 0.2 s a row by the end). Tall cells stop at ROW_LINES lines,
        # so that a window shows more than three papers; the tooltip has the whole quote.
        self.view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.view.verticalHeader().setMaximumSectionSize(self.fontMetrics().lineSpacing() * ROW_LINES + 8)
        self.model.rowsInserted.connect(lambda _parent, first, last: self._fit_rows(first, last))
        self.model.modelReset.connect(lambda: self._fit_rows(0, self.model.rowCount() - 1))
        self.view.clicked.connect(self._on_clicked)
        self.view.activated.connect(self._on_clicked)
        self.csv_button = QPushButton("CSV\u2026", self)
        self.csv_button.setToolTip("Export: each column's sentence, plus its quote and page")
        self.csv_button.clicked.connect(lambda: self.export_requested.emit("csv"))
        self.markdown_button = QPushButton("Markdown\u2026", self)
        self.markdown_button.clicked.connect(lambda: self.export_requested.emit("markdown"))

        self._lay_out()
        self.set_columns(())
        self.set_building(False)

    def _lay_out(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.question_box, 1)
        top.addWidget(self.mode_box)
        top.addWidget(self.build_button)
        column_buttons = QHBoxLayout()
        column_buttons.addWidget(self.add_column_button)
        column_buttons.addWidget(self.remove_column_button)
        column_buttons.addStretch(1)
        editor = QWidget(self)
        editor_layout = QVBoxLayout(editor)
        editor_layout.setContentsMargins(0, 0, 0, 0)
        editor_layout.addWidget(self.columns_editor, 1)
        editor_layout.addLayout(column_buttons)
        progress = QHBoxLayout()
        progress.addWidget(self.progress_bar, 1)
        progress.addWidget(self.progress_label, 2)
        progress.addWidget(self.cancel_button)
        exports = QHBoxLayout()
        exports.addStretch(1)
        exports.addWidget(self.csv_button)
        exports.addWidget(self.markdown_button)
        results = QWidget(self)
        results_layout = QVBoxLayout(results)
        results_layout.setContentsMargins(0, 0, 0, 0)
        results_layout.addLayout(progress)
        results_layout.addWidget(self.notice_label)
        results_layout.addWidget(self.view, 1)
        results_layout.addLayout(exports)
        self._editor_buttons_height = column_buttons.sizeHint().height() + editor_layout.spacing()
        self.splitter = splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(editor)
        splitter.addWidget(results)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)  # a taller window gives its height to the rows, not the editor
        splitter.setChildrenCollapsible(False)
        self._editor_sized = False
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.scope_label)
        layout.addWidget(splitter, 1)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._editor_sized:  # once: after that the splitter is where the user put it
            self._editor_sized = True
            fit_to_screen(self)
            self.fit_editor()

    def fit_editor(self) -> None:
        """Give the column editor the height of its rows (at most a third of the splitter), and the rest
        to the table: a QTableWidget otherwise asks for half of a 1000×640 window."""
        editor = self.columns_editor
        rows = (sum(editor.rowHeight(row) for row in range(editor.rowCount()))
                or editor.verticalHeader().defaultSectionSize())
        needed = (rows + editor.horizontalHeader().sizeHint().height() + 2 * editor.frameWidth()
                  + self._editor_buttons_height)
        total = sum(self.splitter.sizes()) or self.splitter.height()
        editor_height = min(needed, total // 3)
        self.splitter.setSizes([editor_height, max(total - editor_height, 0)])

    # --- columns ---------------------------------------------------------------------------

    def set_columns(self, columns: Sequence[TableColumn]) -> None:
        self.columns_editor.setRowCount(0)
        for column in columns:
            self._append_column(column)

    def columns(self) -> list[TableColumn]:
        """The columns as typed (the engine fills in or shortens what needs it, and says so)."""
        found = []
        for row in range(self.columns_editor.rowCount()):
            name, question = (self.columns_editor.item(row, c) for c in (_NAME, _QUESTION))
            found.append(TableColumn(name.text() if name else "", question.text() if question else ""))
        return found

    def _append_column(self, column: TableColumn, edit: bool = False) -> None:
        row = self.columns_editor.rowCount()
        self.columns_editor.insertRow(row)
        name = QTableWidgetItem(column.name)
        self.columns_editor.setItem(row, _NAME, name)
        question = QTableWidgetItem(column.question)
        if not column.question:
            question.setToolTip("Empty: the Answer column answers the table's question; another column asks its name")
        self.columns_editor.setItem(row, _QUESTION, question)
        if edit:
            self.columns_editor.setCurrentCell(row, _NAME)
            self.columns_editor.editItem(name)

    def _remove_selected_columns(self) -> None:
        rows = sorted({index.row() for index in self.columns_editor.selectedIndexes()} or
                      ({self.columns_editor.currentRow()} if self.columns_editor.currentRow() >= 0 else set()),
                      reverse=True)
        for row in rows:
            self.columns_editor.removeRow(row)

    # --- state -----------------------------------------------------------------------------

    def mode(self) -> str:
        return str(self.mode_box.currentData())

    def set_building(self, building: bool) -> None:
        self.building = building
        self.build_button.setEnabled(not building)
        self.cancel_button.setVisible(building)
        self.progress_bar.setVisible(building)
        has_rows = self.model.rowCount() > 0
        self.csv_button.setEnabled(has_rows and not building)
        self.markdown_button.setEnabled(has_rows and not building)

    def set_progress(self, stage: str, done: int, total: int) -> None:
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)
        if stage == "screening":
            self.progress_label.setText(f"Finding the papers that address the question: {done} of {total}")
            return
        rows = self.model.rowCount()
        self.progress_label.setText(f"Reading {total} {'paper' if total == 1 else 'papers'} that address it: "
                                    f"{done} done \u00b7 {rows} {'row' if rows == 1 else 'rows'}")

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.building:  # a closed window's table would go on reading papers nobody sees
            self.cancel_requested.emit()
        super().closeEvent(event)

    def _fit_rows(self, first: int, last: int) -> None:
        for row in range(first, last + 1):
            self.view.resizeRowToContents(row)

    def _on_clicked(self, index: QModelIndex) -> None:
        found = self.model.cell(index)
        if found is not None and found[1] is not None and found[1].stated:
            row: PaperRow = found[0]
            cell: TableCell = found[1]
            self.quote_requested.emit(row, cell)
