"""Asking within one collection (from a Zotero import): its name, its papers, and the dialog that picks it.

A collection includes its sub-collections ("Thesis" holds the papers of "Thesis › Related work"),
as a researcher filing a chapter's reading under sub-collections means them all by the chapter.
Collection names are data from the user's Zotero database and are only ever shown as plain text.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QInputDialog, QWidget

from engine.types import Document

COLLECTION = "collection"
SEPARATOR = " \u203a "


def collection_names(documents: Sequence[Document]) -> list[str]:
    """Every collection a paper is filed in, and each parent of one, sorted."""
    names: set[str] = set()
    for document in documents:
        for path in document.collections:
            parts = path.split(SEPARATOR)
            names.update(SEPARATOR.join(parts[: depth + 1]) for depth in range(len(parts)))
    return sorted(names, key=str.casefold)


def in_collection(document: Document, name: str) -> bool:
    return any(path == name or path.startswith(name + SEPARATOR) for path in document.collections)


def doc_ids_in(documents: Sequence[Document], name: str) -> list[str]:
    """The papers filed in collection ``name`` or any of its sub-collections."""
    return [document.id for document in documents if in_collection(document, name)]


def choose_collection(parent: QWidget, names: Sequence[str], current: str = "") -> str | None:
    """Ask which collection to ask within; None when the user cancels."""
    items = list(names)
    chosen, accepted = QInputDialog.getItem(parent, "Ask within a collection", "Collection:", items,
                                            items.index(current) if current in items else 0, False)
    return chosen if accepted and chosen in items else None
