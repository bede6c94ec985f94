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


def show_error(parent: QWidget | None, message: str, *, wait: bool = False) -> None:
    """Show ``message`` in a warning box; ``wait`` blocks until it is closed (for startup failures)."""
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
