"""What the main window remembers between runs: its geometry, the splitters, the library's column
widths, and the question's scope and "Written answer" box."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings

if TYPE_CHECKING:
    from ui.main_window import MainWindow

_GEOMETRY = "main_window/geometry"
_STATE = "main_window/state"
_HEADER = "main_window/library_header"
_SPLITTER = "main_window/splitter"
_LIBRARY_SPLITTER = "main_window/library_splitter"
_SCOPE = "ask/scope"
_WRITTEN = "ask/written"


def restore_state(window: MainWindow, settings: QSettings) -> None:
    """Put back the saved layout (a first run gets sensible sizes), and save the scope and the
    "Written answer" box whenever they change."""
    geometry = settings.value(_GEOMETRY)
    if not (isinstance(geometry, QByteArray) and window.restoreGeometry(geometry)):
        window.resize(1440, 880)
    window.splitter.setSizes([560, 420, 460])  # titles get room; the viewer zooms to the quote anyway
    window.library.splitter.setSizes([560, 200])
    for key, widget in ((_STATE, window), (_SPLITTER, window.splitter), (_LIBRARY_SPLITTER, window.library.splitter),
                        (_HEADER, window.table.horizontalHeader())):
        state = settings.value(key)
        if isinstance(state, QByteArray):
            widget.restoreState(state)
    window.library.column_fitter.remember_widths()  # the restored widths are the ones to come back to
    pane = window.ask_pane
    pane.set_scope(str(settings.value(_SCOPE, "everything")))
    pane.write_box.setChecked(str(settings.value(_WRITTEN, "false")).lower() == "true")
    # Saved when changed, not only on close: a crash must not forget them.
    pane.scope_box.currentIndexChanged.connect(lambda _: settings.setValue(_SCOPE, pane.scope()))
    pane.write_box.toggled.connect(lambda on: settings.setValue(_WRITTEN, "true" if on else "false"))


def save_state(window: MainWindow, settings: QSettings) -> None:
    settings.setValue(_GEOMETRY, window.saveGeometry())
    settings.setValue(_STATE, window.saveState())
    settings.setValue(_SPLITTER, window.splitter.saveState())
    settings.setValue(_LIBRARY_SPLITTER, window.library.splitter.saveState())
    settings.setValue(_HEADER, window.table.horizontalHeader().saveState())
    settings.sync()
