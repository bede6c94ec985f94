"""Metadata the user corrects (title, authors, year, DOI, venue), metadata other sources supply, and
the collections a paper is filed in.

Each is stored apart from what ingest extracted and laid over it in a fixed order
(:mod:`engine.store.overlay`), so re-reading a PDF or importing again never undoes a correction. The
document row and the search index's title column are updated too, so references, exports and search
all use the resulting values at once.
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
MAX_VENUE_CHARS = 300  # the longest proceedings names run to about 150


class MetadataError(EngineError):
    """A metadata value that cannot be stored (a year that is not a year, a malformed DOI)."""


def clean_metadata(title: str | None = None, authors: Sequence[str] | None = None, year: int | str | None = None,
                   doi: str | None = None, venue: str | None = None) -> dict[str, object]:
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
    if venue is not None:
        text = " ".join(venue.split())
        if len(text) > MAX_VENUE_CHARS:
            raise MetadataError(f"Venue: {len(text)} characters is too long for a journal or proceedings name; "
                                f"shorten it to {MAX_VENUE_CHARS} or fewer.")
        fields["venue"] = text
    return fields


def update_metadata(library: Library, doc_id: str, **changes: object) -> Document:
    """Correct a paper's title, authors, year, DOI and/or venue; returns the paper as now stored."""
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


def import_metadata(library: Library, doc_id: str, source: str, fields: dict[str, object], *,
                    fill_only: bool = False) -> Document:
    """Store what ``source`` says about a paper (replacing what it said before) and apply it.

    ``fill_only``: use these values only where the PDF gave none (a datastore record). Otherwise they
    go over the extracted values (a Zotero item). The user's corrections stay on top either way.
    """
    document = library.document(doc_id)
    cleaned = clean_metadata(**fields)  # type: ignore[arg-type]
    with library.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO document_imported(doc_id, source, fields, fill_only, imported_at) "
                     "VALUES (?,?,?,?,?)", (document.id, source, json.dumps(cleaned), int(fill_only), time.time()))
        apply_edits(conn, document.id)
    return library.document(document.id)


def set_collections(library: Library, doc_id: str, collections: Iterable[str], source: str) -> None:
    """File ``doc_id`` in exactly these collections from ``source`` (others' collections are kept)."""
    with library.transaction() as conn:
        conn.execute("DELETE FROM document_collections WHERE doc_id=? AND source=?", (doc_id, source))
        conn.executemany("INSERT OR IGNORE INTO document_collections(doc_id, collection, source) VALUES (?,?,?)",
                         [(doc_id, name, source) for name in sorted(set(collections)) if name])


def collections_of(library: Library, doc_id: str) -> list[str]:
    rows = library.query("SELECT collection FROM document_collections WHERE doc_id=? ORDER BY collection", (doc_id,))
    return [row[0] for row in rows]


def collections_from(library: Library, doc_id: str, source: str) -> list[str]:
    """The collections one source (a Zotero import) filed a paper in, sorted."""
    rows = library.query("SELECT collection FROM document_collections WHERE doc_id=? AND source=? ORDER BY collection",
                         (doc_id, source))
    return [row[0] for row in rows]
