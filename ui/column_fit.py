"""Column priorities for a narrow library table: the title stays readable, the columns to its right
give way first.

When the window is narrow (1024×700 with three panes), a stretching Title column would otherwise
be the only one to shrink, down to "Ap…", while Authors, Year, Pages and Status kept their widths.
Here the right-hand columns shrink first, rightmost first (their text elides), and the least
useful ones are hidden when even that is not enough; widening the window brings them back at the
widths the user gave them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QHeaderView, QTableView

TITLE_MIN_PX = 220  # about 30 characters: enough to tell two papers apart
TITLE_MIN_SHARE = 0.5  # on a very narrow table, half of it


def fit_columns(available: int, wanted: Mapping[int, int], minimum: Mapping[int, int], shrink_order: Sequence[int],
                hide_order: Sequence[int], title_min: int) -> tuple[dict[int, int], set[int]]:
    """Widths for the columns beside the title and the columns to hide, so the title keeps
    ``title_min`` pixels of ``available``: shrink along ``shrink_order`` (each down to its minimum),
    then hide along ``hide_order``."""
    budget = max(0, available - title_min)
    widths = dict(wanted)
    hidden: set[int] = set()

    def used() -> int:
        return sum(width for column, width in widths.items() if column not in hidden)

    for column in shrink_order:
        excess = used() - budget
        if excess <= 0:
            break
        widths[column] = max(minimum.get(column, 0), widths[column] - excess)
    for column in hide_order:
        if used() <= budget:
            break
        hidden.add(column)
    return widths, hidden


class ColumnFitter(QObject):
    """Keeps a table's title column readable as the table is resized (see :func:`fit_columns`)."""

    def __init__(self, table: QTableView, title: int, minimum: Mapping[int, int], shrink_order: Sequence[int],
                 hide_order: Sequence[int]) -> None:
        super().__init__(table)
        self._table = table
        self._title = title
        self._minimum = dict(minimum)
        self._shrink_order = list(shrink_order)
        self._hide_order = list(hide_order)
        self._fitting = False
        header = table.horizontalHeader()
        self.wanted = {column: header.sectionSize(column) for column in self._minimum}
        header.sectionResized.connect(self._on_resized)
        table.viewport().installEventFilter(self)

    def remember_widths(self) -> None:
        """Take the header's present widths as the ones wanted (after restoring a saved layout)."""
        header = self._table.horizontalHeader()
        self.wanted = {column: header.sectionSize(column) or self.wanted[column] for column in self._minimum}
        self.fit()

    def fit(self) -> None:
        header: QHeaderView = self._table.horizontalHeader()
        available = self._table.viewport().width()
        title_min = min(TITLE_MIN_PX, int(available * TITLE_MIN_SHARE))
        widths, hidden = fit_columns(available, self.wanted, self._minimum, self._shrink_order, self._hide_order,
                                     title_min)
        self._fitting = True
        try:
            for column, width in widths.items():
                header.setSectionHidden(column, column in hidden)
                if column not in hidden and header.sectionSize(column) != width:
                    header.resizeSection(column, width)
        finally:
            self._fitting = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.fit()
        return False

    def _on_resized(self, column: int, _old: int, new: int) -> None:
        if not self._fitting and column in self.wanted and new > 0:
            self.wanted[column] = new  # the user dragged it: that is the width to come back to
