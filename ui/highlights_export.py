"""Answer › Highlights…: "Save highlights to PDFs…", each cited quote written into its paper as a highlight."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QMessageBox, QWidget

if TYPE_CHECKING:
    from ui.engine_client import EngineClient

COPIES, IN_PLACE = "copies", "in place"


def ask_where(parent: QWidget) -> str | None:
    """Copies beside the papers (the default), into the PDFs themselves, or nothing (None)."""
    box = QMessageBox(QMessageBox.Icon.Question, "Save Highlights to PDFs",
                      "Save each cited quote as a highlight, with the question and the sentence it supports as its "
                      "note?\n\nCopies are saved as <name>.quire.pdf beside each paper; the originals stay as they "
                      "are. Into the PDFs keeps their own annotations.", parent=parent)
    copies = box.addButton("Save &Copies", QMessageBox.ButtonRole.AcceptRole)
    in_place = box.addButton("Into the &PDFs", QMessageBox.ButtonRole.DestructiveRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(copies)
    box.exec()
    clicked = box.clickedButton()
    return COPIES if clicked is copies else IN_PLACE if clicked is in_place else None


def save_highlights(client: EngineClient, parent: QWidget, answer_id: str, status: Any) -> None:
    """Ask where, write on the engine's lane, then say what was saved (problems go to the error dialog)."""
    where = ask_where(parent)
    if where is None:
        return

    def done(results: list[Any]) -> None:
        problems = [result.problem for result in results if result.problem]
        written = [result for result in results if result.written]
        if problems:
            client.error.emit("Some highlights could not be saved:\n\n" + "\n".join(problems))
        if written:
            added = sum(result.added for result in written)
            names = ", ".join(Path(result.written).name for result in written)
            status(f"Saved {added} highlights in {names}." if added else f"The highlights are already in {names}.")
        elif not results:
            status("This answer quotes no PDF of the library; there is nothing to highlight.")

    client.annotate_answer(answer_id, where == IN_PLACE, done)
