"""Metadata the user corrects (title, authors, year, DOI) and the collections a paper is filed in.

Corrections are stored apart from what ingest extracted (table ``document_edits``) and applied over
it, so re-reading a PDF never undoes them; the document row and the search index's title column
are updated too, so references, exports and search all use the corrected values at once.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from engine.errors import EngineError
from engine.store.catalog import Library
from engine.store.overlay import apply_edits

if TYPE_CHECKING:
    from engine.types import Document

_DOI = re.compile(r"^10\.\d{4,9}/\S+$")


class MetadataError(EngineError):
    """A metadata value that cannot be stored (a year that is not a year, a malformed DOI)."""


def clean_metadata(title: str | None = None, authors: Sequence[str] | None = None, year: int | str | None = None,
                   doi: str | None = None) -> dict[str, object]:
    """Validated fields to change (None = leave as is); raises :class:`MetadataError` naming the field."""
    fields: dict[str, object] = {}
    if title is not None:
        fields["title"] = " ".join(title.split())
    if authors is not None:
        fields["authors"] = [" ".join(a.split()) for a in authors if a.strip()]
    if year is not None:
        text = str(year).strip()
        if text and not (text.isdigit() and 1000 <= int(text) <= 2999):
            raise MetadataError(f"Year: {text!r} is not a year; give four digits such as 2020, or leave it empty.")
        fields["year"] = int(text) if text else None
    if doi is not None:
        text = doi.strip().removeprefix("https://doi.org/").removeprefix("http://doi.org/").removeprefix("doi:")
        if text and not _DOI.match(text):
            raise MetadataError(f"DOI: {doi.strip()!r} does not look like a DOI (10.1234/…); fix it or leave it empty.")
        fields["doi"] = text
    return fields


def update_metadata(library: Library, doc_id: str, **changes: object) -> Document:
    """Correct a paper's title, authors, year and/or DOI; returns the paper as now stored."""
    document = library.document(doc_id)
    fields = clean_metadata(**changes)  # type: ignore[arg-type]
    if not fields:
        return document
    with library.transaction() as conn:
        row = conn.execute("SELECT edits FROM document_edits WHERE doc_id=?", (document.id,)).fetchone()
        edits = {**(json.loads(row[0]) if row else {}), **fields}
        conn.execute("INSERT OR REPLACE INTO document_edits(doc_id, edits, edited_at) VALUES (?,?,?)",
                     (document.id, json.dumps(edits), time.time()))
        apply_edits(conn, document.id)
    return library.document(document.id)


def set_collections(library: Library, doc_id: str, collections: Iterable[str], source: str) -> None:
    """File ``doc_id`` in exactly these collections from ``source`` (others' collections are kept)."""
    with library.transaction() as conn:
        conn.execute("DELETE FROM document_collections WHERE doc_id=? AND source=?", (doc_id, source))
        conn.executemany("INSERT OR IGNORE INTO document_collections(doc_id, collection, source) VALUES (?,?,?)",
                         [(doc_id, name, source) for name in sorted(set(collections)) if name])


def collections_of(library: Library, doc_id: str) -> list[str]:
    with library.transaction() as conn:
        rows = conn.execute("SELECT collection FROM document_collections WHERE doc_id=? ORDER BY collection",
                            (doc_id,)).fetchall()
    return [row[0] for row in rows]
