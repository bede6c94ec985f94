"""The Tools menu's dialogs (Settings, Models & Datastores), one of each at a time.

A second click raises the open dialog, or does nothing while the first one's settings are still
being read, so an older copy of the settings can never be saved over a newer one. The dialogs are
window-modal (``open``), not ``exec``: nothing here blocks the event loop.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QDialog, QWidget

from ui.engine_client import EngineClient
from ui.models_dialog import ModelsDialog
from ui.settings_dialog import SettingsDialog


class ToolDialogs:
    """Opens Settings and Models & Datastores over ``parent``; ``tell`` shows a status message."""

    def __init__(self, parent: QWidget, client: EngineClient, tell: Callable[[str], None],
                 on_models_closed: Callable[[], None]) -> None:
        self._parent, self._client, self._tell, self._on_models_closed = parent, client, tell, on_models_closed
        self.settings: SettingsDialog | None = None  # None while closed
        self.models: ModelsDialog | None = None
        self._settings_loading = False

    def open_settings(self) -> None:
        if self._raise(self.settings) or self._settings_loading:
            return
        self._settings_loading = True

        def edit(current: object) -> None:
            self._settings_loading = False
            dialog = SettingsDialog(current, self._parent, run_check=self._client.run_quick)
            dialog.accepted.connect(lambda: self._client.save_settings(
                dialog.settings(), lambda _: self._tell("Settings saved; they apply to the next question.")))
            dialog.finished.connect(lambda _result: self._closed("settings"))
            self.settings = dialog
            dialog.open()

        def failed() -> None:
            self._settings_loading = False
        self._client.load_settings(edit, on_failure=failed)

    def open_models(self) -> None:
        if self._raise(self.models):
            return
        dialog = ModelsDialog(self._client, self._parent)
        dialog.finished.connect(self._models_closed)
        self.models = dialog
        dialog.open()

    def _models_closed(self) -> None:
        self._closed("models")
        self._on_models_closed()

    @staticmethod
    def _raise(dialog: QDialog | None) -> bool:
        if dialog is None:
            return False
        dialog.raise_()
        dialog.activateWindow()
        return True

    def _closed(self, name: str) -> None:
        dialog = getattr(self, name)
        setattr(self, name, None)
        if dialog is not None:
            dialog.deleteLater()
