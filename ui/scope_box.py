"""Where a question looks for its answer: the scope box beside the question, and the line under it that
says where the question goes when a server datastore is connected."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QToolTip, QWidget

from ui.collection_scope import COLLECTION, choose_collection

EVERYTHING, LIBRARY, SELECTED = "everything", "library", "selected"
SCOPES = ((EVERYTHING, "Everything"), (LIBRARY, "Library only"), (SELECTED, "Selected papers"),
          (COLLECTION, "Collection…"))


class ScopeBox(QComboBox):
    """Everything, the library, the selected papers, or one collection (chosen when that item is picked)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Scope")
        self.setToolTip("Where to look for the answer")
        for key, label in SCOPES:
            self.addItem(label, key)
        self.collection = ""  # the collection asked within, when the scope is COLLECTION
        self.collection_names: Callable[[], list[str]] = list  # the library's collections (set by the window)
        self._before = 0  # the item to go back to when choosing a collection is cancelled
        self.activated.connect(self._on_activated)

    def scope(self) -> str:
        return str(self.currentData())

    def set_scope(self, key: str) -> None:
        if key == COLLECTION:  # a remembered collection scope would need its collection chosen again
            return
        index = self.findData(key)
        if index >= 0:
            self.setCurrentIndex(index)

    def _on_activated(self, index: int) -> None:
        if self.itemData(index) != COLLECTION:
            self._before = index
            return
        names = self.collection_names()
        chosen = choose_collection(self, names, self.collection) if names else None
        if chosen is None:
            self.setCurrentIndex(self._before)
            if not names:
                QToolTip.showText(self.mapToGlobal(self.rect().bottomLeft()),
                                  "No paper is filed in a collection; import from Zotero to ask within one.", self)
            return
        self.collection = chosen
        self.setItemText(index, f"Collection: {chosen}")
        self.setItemData(index, chosen, Qt.ItemDataRole.ToolTipRole)
        self._before = index


class NetworkNote(QLabel):
    """The offline promise as it stands: with a server datastore connected, a question asked of everything
    goes to that server (and nowhere else); said beside the scope, before asking."""

    def __init__(self, scope_box: ScopeBox, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._scope_box = scope_box
        self._servers: list[tuple[str, str]] = []
        self.setTextFormat(Qt.TextFormat.PlainText)  # names and hosts come from the user's settings
        self.setWordWrap(True)
        self.setAccessibleName("Where the question goes")
        self.hide()
        scope_box.currentIndexChanged.connect(lambda _index: self.refresh())

    def set_servers(self, servers: Sequence[tuple[str, str]]) -> None:
        """Connected server datastores as (name, user@host/database)."""
        self._servers = list(servers)
        self.refresh()

    def refresh(self) -> None:
        if not self._servers or self._scope_box.scope() != EVERYTHING:
            self.hide()
            return
        where = ", ".join(f"{name} ({location})" for name, location in self._servers)
        plural = "s" if len(self._servers) > 1 else ""
        self.setText(f"This question is sent to the server datastore{plural} {where} and nowhere else; "
                     "your papers stay on this computer.")
        self.show()
