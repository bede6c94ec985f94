"""The look: Fusion (the same on every platform) with Quire's light stylesheet from resources/themes."""

from __future__ import annotations

import logging
from importlib import resources

from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

log = logging.getLogger(__name__)


def stylesheet(name: str = "light") -> str:
    """The bundled stylesheet ``name``.qss, or "" if it is missing (the app still works unstyled)."""
    try:
        return (resources.files("resources") / "themes" / f"{name}.qss").read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        log.warning("Theme %s is missing; using Qt's default look", name)
        return ""


def apply_theme(app: QApplication, name: str = "light") -> None:
    app.setStyle("Fusion")
    palette = app.palette()
    palette.setColor(QPalette.ColorRole.Window, QColor("#f6f6f4"))
    palette.setColor(QPalette.ColorRole.Highlight, QColor("#2f6fde"))
    palette.setColor(QPalette.ColorRole.Link, QColor("#1f5fbf"))
    app.setPalette(palette)
    font = app.font()
    if font.pointSizeF() < 10:
        font.setPointSizeF(10)
    font.setStyleStrategy(QFont.StyleStrategy.PreferAntialias)
    app.setFont(font)
    app.setStyleSheet(stylesheet(name))
