"""Library → Watched Folders…: the folders the library follows, and the papers whose files are gone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from ui.engine_client import EngineClient
    from ui.watch_follower import WatchFollower

# The engine's WatchedFolder and MissingFile values, as the client hands them over.
WatchedFolder = Any
MissingFile = Any


class WatchDialog(QDialog):
    """Add and remove watched folders; remove the papers whose files are missing."""

    def __init__(self, client: EngineClient, follower: WatchFollower, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._client = client
        self._follower = follower
        self.setWindowTitle("Watched Folders")
        self.folders = QListWidget()
        self.missing = QLabel()
        self.missing.setWordWrap(True)
        self.add_button = QPushButton("&Add Folder…")
        self.remove_button = QPushButton("&Stop Watching")
        self.prune_button = QPushButton("Remove &Missing Papers")
        self.prune_button.setToolTip("Remove from the library the papers whose files were deleted")
        self.add_button.clicked.connect(self._choose)
        self.remove_button.clicked.connect(self._remove)
        self.prune_button.clicked.connect(self._prune)
        self.folders.itemSelectionChanged.connect(self._update_buttons)
        buttons = QHBoxLayout()
        for button in (self.add_button, self.remove_button, self.prune_button):
            buttons.addWidget(button)
        buttons.addStretch()
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("New and changed PDFs in these folders (and their subfolders) come into the library "
                                "while Quire runs, and at every start. A deleted PDF's paper is kept, marked "
                                "missing, until you remove it."))
        layout.addWidget(self.folders)
        layout.addLayout(buttons)
        layout.addWidget(self.missing)
        layout.addWidget(close)
        follower.report_ready.connect(lambda _: self.reload())
        self.reload()

    def reload(self) -> None:
        self._client.watched_folders(self._show)

    def add_folder(self, folder: str) -> None:
        """Watch ``folder`` (a refusal goes to the error dialog, saying why)."""
        self._client.watch_folder(folder, lambda _: self._edited())

    def _show(self, state: tuple[list[WatchedFolder], list[MissingFile]]) -> None:
        folders, missing = state
        self.folders.clear()
        for folder in folders:
            item = QListWidgetItem(folder.path + (f"  (unavailable: {folder.unavailable})" if folder.unavailable
                                                  else ""))
            item.setData(256, folder.path)  # Qt.UserRole
            self.folders.addItem(item)
        self.missing.setText(f"{len(missing)} papers are missing: their files were deleted or moved out of these "
                             "folders. Their past answers still open." if missing else "No paper is missing.")
        self.prune_button.setEnabled(bool(missing))
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.remove_button.setEnabled(bool(self.folders.selectedItems()))

    def _choose(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a folder to watch")
        if folder:
            self.add_folder(folder)

    def _remove(self) -> None:
        for item in self.folders.selectedItems():
            self._client.unwatch_folder(str(item.data(256)), lambda _: self._edited())

    def _prune(self) -> None:
        self._follower.sync(prune=True)

    def _edited(self) -> None:
        self.reload()
        self._follower.folders_changed()

