"""What the main window remembers between runs: its geometry, the splitters, the library's column
widths, and the question's scope and "Written answer" box.

It is handed the window's parts rather than the main window itself, so that it never imports
ui.main_window (which imports it): no import circle, even one for typing only.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow, QSplitter, QWidget

from ui.ask_pane import AskPane
from ui.library_pane import LibraryPane

_GEOMETRY = "main_window/geometry"
_STATE = "main_window/state"
_HEADER = "main_window/library_header"
_SPLITTER = "main_window/splitter"
_LIBRARY_SPLITTER = "main_window/library_splitter"
_SCOPE = "ask/scope"
_WRITTEN = "ask/written"
FIRST_SIZE = QSize(1440, 880)  # a first run's size, where the screen has room for it
TITLE_BAR_ALLOWANCE = 32  # pixels a window manager's title bar takes above the window's own area
BORDER_ALLOWANCE = 8  # and its borders, on each side


def restore_state(window: QMainWindow, splitter: QSplitter, library: LibraryPane, pane: AskPane,
                  settings: QSettings) -> None:
    """Put back the saved layout of ``window`` (a first run gets sensible sizes), and save the scope
    and the "Written answer" box of the ask pane whenever they change."""
    geometry = settings.value(_GEOMETRY)
    if not (isinstance(geometry, QByteArray) and window.restoreGeometry(geometry)):
        window.resize(FIRST_SIZE)
    fit_to_screen(window)
    splitter.setSizes([560, 420, 460])  # titles get room; the viewer zooms to the quote anyway
    library.splitter.setSizes([560, 200])
    for key, widget in ((_STATE, window), (_SPLITTER, splitter), (_LIBRARY_SPLITTER, library.splitter),
                        (_HEADER, library.table.horizontalHeader())):
        state = settings.value(key)
        if isinstance(state, QByteArray):
            widget.restoreState(state)
    library.column_fitter.remember_widths()  # the restored widths are the ones to come back to
    pane.set_scope(str(settings.value(_SCOPE, "everything")))
    pane.write_box.setChecked(str(settings.value(_WRITTEN, "false")).lower() == "true")
    # Saved when changed, not only on close: a crash must not forget them.
    pane.scope_box.currentIndexChanged.connect(lambda _: settings.setValue(_SCOPE, pane.scope()))
    pane.write_box.toggled.connect(lambda on: settings.setValue(_WRITTEN, "true" if on else "false"))


def fit_to_screen(window: QWidget) -> None:
    """Shrink and move the window into its screen's available area (the desktop less its panels, and room for
    a window manager's title bar): a first run's size, or one saved on a larger monitor, must not open the
    window past the edges of a 1366x768 laptop."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return
    available = screen.availableGeometry()
    border = 2 * BORDER_ALLOWANCE
    size = window.size().boundedTo(QSize(available.width() - border,
                                         available.height() - TITLE_BAR_ALLOWANCE - border))
    if size != window.size():
        window.resize(size)
    x = min(max(window.x(), available.left()), available.right() + 1 - size.width() - border)
    y = min(max(window.y(), available.top()), available.bottom() + 1 - size.height() - TITLE_BAR_ALLOWANCE - border)
    if (x, y) != (window.x(), window.y()):
        window.move(max(x, available.left()), max(y, available.top()))


def save_state(window: QMainWindow, splitter: QSplitter, library: LibraryPane, settings: QSettings) -> None:
    settings.setValue(_GEOMETRY, window.saveGeometry())
    settings.setValue(_STATE, window.saveState())
    settings.setValue(_SPLITTER, splitter.saveState())
    settings.setValue(_LIBRARY_SPLITTER, library.splitter.saveState())
    settings.setValue(_HEADER, library.table.horizontalHeader().saveState())
    settings.sync()
