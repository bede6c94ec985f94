"""The one place where errors become dialogs.

Every error the user should see (engine failures, files that could not be added, a library that
cannot be opened) arrives here as a message the engine already phrased for people, so this module
only decides how it looks. Tests replace :func:`show_error` to record messages without a modal box.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

log = logging.getLogger(__name__)


# Settings keys as the engine and the CLI name them -> as the Settings dialog labels them.
_SETTING_NAMES = (("Settings → generation.model", "Settings › Model file"),
                  ("Settings → retrieval.embedder", "Settings › Embedder"),
                  ("generation.model", "the Model file in Settings"),
                  ("retrieval.embedder", "the Embedder in Settings"),
                  ("use --write to see", "tick “Written answer” to see"))


def for_the_app(message: str) -> str:
    """An engine message worded for the app: settings named as the dialog names them, not as TOML keys."""
    for engine_words, app_words in _SETTING_NAMES:
        message = message.replace(engine_words, app_words)
    return message


def show_error(parent: QWidget | None, message: str, *, wait: bool = False) -> None:
    """Show ``message`` in a warning box; ``wait`` blocks until it is closed (for startup failures)."""
    message = for_the_app(message)
    log.warning("Shown to the user: %s", message)
    # A blank line separates the headline from details such as a list of failed files.
    headline, _, details = message.partition("\n\n")
    box = QMessageBox(QMessageBox.Icon.Warning, "Quire", headline, QMessageBox.StandardButton.Ok, parent)
    # Messages quote file names and paper titles, which may contain markup: never render it.
    box.setTextFormat(Qt.TextFormat.PlainText)
    if details:
        box.setInformativeText(details)
    for label in box.findChildren(QLabel):  # older Qt versions leave the informative text on AutoText
        label.setTextFormat(Qt.TextFormat.PlainText)
    box.setAccessibleName("Error")
    box.setAccessibleDescription(message)
    if wait:
        box.exec()
        box.deleteLater()
        return
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    # Window-modal and non-blocking: engine signals keep arriving while the box is open.
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.open()


def confirm(parent: QWidget | None, question: str, details: str = "", *, action: str = "Remove") -> bool:
    """Ask before something that cannot be undone; True when the user chose ``action``.

    The default button is Cancel, so a second press of Delete or Enter never removes anything.
    Tests replace this function to answer for the user.
    """
    box = QMessageBox(QMessageBox.Icon.Question, "Quire", question, QMessageBox.StandardButton.Cancel, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)  # questions quote paper titles: never render them
    if details:
        box.setInformativeText(details)
    for label in box.findChildren(QLabel):
        label.setTextFormat(Qt.TextFormat.PlainText)
    accept = box.addButton(action, QMessageBox.ButtonRole.DestructiveRole)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.setAccessibleName("Confirm")
    box.exec()
    chosen = box.clickedButton() is accept
    box.deleteLater()
    return chosen
