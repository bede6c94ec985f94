"""Column priorities for a narrow library table: the title stays readable, and the columns beside
it give way in a chosen order, each either shown whole or hidden.

When the window is narrow (1024×700 with three panes), cutting every column ("2…" for a year,
"Emb…" for a status) shows nothing readable. Instead the least useful columns are hidden whole,
and only a column whose text is a name (the authors, shown Zotero-style as "Cohan et al.") may be
narrowed, down to a width that still shows its first author; widening the window brings the
columns back at the widths the user gave them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QHeaderView, QTableView

TITLE_MIN_PX = 220  # about 30 characters: enough to tell two papers apart
# On a very narrow table (a 1024-pixel window with a paper open: 280-300 px), 40 % of it: room for
# the title's first words, the first author and the year, where half left no room for the year.
TITLE_MIN_SHARE = 0.4
HIDE: Literal["hide"] = "hide"
SHRINK: Literal["shrink"] = "shrink"


class Step(NamedTuple):
    """One way of making room: hide ``column``, or narrow it down to ``floor`` pixels (0: its minimum)."""

    action: Literal["hide", "shrink"]
    column: int
    floor: int = 0


def fit_columns(available: int, wanted: Mapping[int, int], minimum: Mapping[int, int], give_way: Sequence[Step],
                title_min: int) -> tuple[dict[int, int], set[int]]:
    """Widths for the columns beside the title and the columns to hide, so the title keeps
    ``title_min`` pixels of ``available``: take the steps of ``give_way`` in order (hide a column,
    or shrink it down to its minimum) until the rest fits, then let a narrowed column take back
    what a later step freed."""
    budget = max(0, available - title_min)
    widths = dict(wanted)
    hidden: set[int] = set()

    def used() -> int:
        return sum(width for column, width in widths.items() if column not in hidden)

    for action, column, floor in give_way:
        excess = used() - budget
        if excess <= 0:
            break
        if action == HIDE:
            hidden.add(column)
        else:
            narrowed = max(floor or minimum.get(column, 0), widths[column] - excess)
            widths[column] = min(widths[column], narrowed)
    # A column hidden after another was narrowed may have freed more than was needed: the narrowed
    # ones take it back, up to the width they want.
    for action, column, _floor in give_way:
        spare = budget - used()
        if action == SHRINK and column not in hidden and spare > 0:
            widths[column] = min(wanted[column], widths[column] + spare)
    return widths, hidden


class ColumnFitter(QObject):
    """Keeps a table's title column readable as the table is resized (see :func:`fit_columns`)."""

    def __init__(self, table: QTableView, title: int, minimum: Mapping[int, int], give_way: Sequence[Step]) -> None:
        super().__init__(table)
        self._table = table
        self._title = title
        self._minimum = dict(minimum)
        self._give_way = list(give_way)
        self._fitting = False
        header = table.horizontalHeader()
        self.wanted = {column: header.sectionSize(column) for column in self._minimum}
        header.sectionResized.connect(self._on_resized)
        table.viewport().installEventFilter(self)

    def remember_widths(self) -> None:
        """Take the header's present widths as the ones wanted (after restoring a saved layout)."""
        header = self._table.horizontalHeader()
        # Never narrower than a column's minimum: a layout saved before the widths were measured
        # from the font would bring back a cut year or status.
        self.wanted = {column: max(header.sectionSize(column) or self.wanted[column], self._minimum[column])
                       for column in self._minimum}
        self.fit()

    def fit(self) -> None:
        header: QHeaderView = self._table.horizontalHeader()
        available = self._table.viewport().width()
        title_min = min(TITLE_MIN_PX, int(available * TITLE_MIN_SHARE))
        widths, hidden = fit_columns(available, self.wanted, self._minimum, self._give_way, title_min)
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
            # The user dragged it: that is the width to come back to (never less than its text needs).
            self.wanted[column] = max(new, self._minimum[column])
