"""The Help menu: keyboard shortcuts, where Quire keeps your data, and About."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QMessageBox, QWidget

import engine

FIXED_SHORTCUTS = (("Enter", "Ask the question"), ("Shift+Enter", "New line in the question"),
                   ("Esc", "Stop what is running (finished work is kept)"),
                   ("Double-click a paper", "Read it in the viewer"),
                   ("Click a citation [n]", "Open the quote on its page"))


def shortcuts_text(actions: Sequence[QAction]) -> str:
    """Every action that has a shortcut, as ``Ctrl+O  Add PDFs…`` lines, then the fixed gestures."""
    lines = []
    for action in actions:
        keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if keys:
            lines.append(f"{keys}\t{action.text().replace('&&', '&').replace('&', '')}")
    lines += [f"{keys}\t{what}" for keys, what in FIXED_SHORTCUTS]
    return "\n".join(lines)


def data_text(home: Path, settings_file: Path | None = None, log_dir: Path | None = None) -> str:
    """Where the library, settings and logs are, for the Help › Where Your Data Lives box."""
    lines = [f"Library (papers' text, answers, vectors): {home}",
             f"Settings: {settings_file or home / 'settings.toml'}"]
    if log_dir is not None:
        lines.append(f"Logs: {log_dir}")
    lines.append("Your PDFs stay where they are; Quire only reads them. Nothing leaves this computer.")
    return "\n".join(lines)


def about_text() -> str:
    return (f"Quire {engine.__version__}\nAn offline research assistant: ask your PDFs literature questions and "
            "get answers whose every claim cites a passage you can open on its page.\n"
            "Demo papers: CC BY 4.0, from the ACL Anthology. Sample datastore: SciREX and SciTLDR (Apache-2.0).")


def _show(parent: QWidget, title: str, text: str) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.Information, title, text, QMessageBox.StandardButton.Close, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)  # paths may contain anything
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.open()
    return box


def add_help_menu(window: QMainWindow, actions: Sequence[QAction], home: Path,
                  settings_file: Path | None = None, log_dir: Path | None = None) -> QMenu:
    """Add Help › Keyboard Shortcuts, Where Your Data Lives, About Quire to ``window``'s menu bar."""
    menu = window.menuBar().addMenu("&Help")
    entries = (("&Keyboard Shortcuts", "Keyboard shortcuts", lambda: shortcuts_text(actions)),
               ("&Where Your Data Lives", "Where your data lives", lambda: data_text(home, settings_file, log_dir)),
               ("&About Quire", "About Quire", about_text))
    for label, title, text in entries:
        action = QAction(label, window)
        action.triggered.connect(lambda _=False, t=title, make=text: _show(window, t, make()))
        menu.addAction(action)
    return menu
