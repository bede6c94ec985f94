"""Saving references for a reference manager: one save dialog offering BibTeX, RIS and CSL-JSON,
used for an answer's cited papers and for papers of the library."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from ui.engine_client import EngineClient

# Filter shown in the save dialog -> the engine's format name and its suffix.
FILTERS: dict[str, tuple[str, str]] = {
    "BibTeX (*.bib)": ("bibtex", ".bib"),
    "RIS — EndNote, Zotero, Mendeley (*.ris)": ("ris", ".ris"),
    "CSL-JSON — Zotero, Pandoc (*.json)": ("csl-json", ".json"),
}


def format_for(path: str, chosen_filter: str) -> tuple[str, str]:
    """The format to write and the path to write it to: a typed suffix decides, else the chosen filter
    (whose suffix is then added, as not every platform's dialog adds it)."""
    suffix = Path(path).suffix.lower()
    for name, known_suffix in FILTERS.values():
        if suffix == known_suffix:
            return name, path
    name, known_suffix = FILTERS.get(chosen_filter, FILTERS["BibTeX (*.bib)"])
    return name, path + known_suffix


def ask_where(parent: QWidget, caption: str, suggested: Path) -> tuple[str, str] | None:
    """The (format, path) the user chose, or None when they cancelled."""
    path, chosen = QFileDialog.getSaveFileName(parent, caption, str(suggested), ";;".join(FILTERS))
    return format_for(path, chosen) if path else None


def export_library(parent: QWidget, client: EngineClient, doc_ids: Sequence[str], count: int, folder: Path,
                   show: Callable[[str], None]) -> Path | None:
    """Ask where, then save the references of ``doc_ids`` (all papers when empty) in the background;
    returns the folder chosen (the next export starts there), or None when cancelled."""
    chosen = ask_where(parent, "Export References", folder / "references.bib")
    if chosen is None:
        return None
    format_name, path = chosen

    def write(text: str) -> None:
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as exc:
            client.error.emit(f"Could not write {path}: {exc.strerror or exc}. Choose another folder.")
            return
        show(f"Saved the references of {count} paper{'s' if count != 1 else ''} to {Path(path).name}.")
    client.export_documents(doc_ids, format_name, write)
    return Path(path).parent
