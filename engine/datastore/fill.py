"""Fill in a library paper's missing metadata from a datastore record of the same paper.

A PDF often prints no year or no authors that layout analysis can find, while a datastore built
from a bibliographic dump holds them. The record is matched by DOI or arXiv id only: a title
match would be a guess, and a wrong record's year is worse than none. The values are stored as a
``fill_only`` layer, so they never replace what the PDF gave, what Zotero gave, or what the user
typed (see :mod:`engine.store.edits`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from engine.datastore.registry import DatastoreRegistry
from engine.datastore.source import DatastoreSource
from engine.errors import EngineError
from engine.retrieve.dedupe import normalize_arxiv, normalize_doi
from engine.store.catalog import Library
from engine.store.edits import MetadataError, import_metadata
from engine.types import Document

log = logging.getLogger(__name__)

SOURCE_PREFIX = "datastore:"


def _record_fields(source: DatastoreSource, document: Document) -> dict[str, object] | None:
    """The title, authors, year and identifiers of ``source``'s record of ``document``, if it has one."""
    doi = normalize_doi(document.bib.doi)
    arxiv_id = normalize_arxiv(document.bib.arxiv_id)
    # The datastore reader stores both identifiers lower-case and without an arXiv version, the
    # normalised forms compared here; equality keeps the lookup on the columns' indexes.
    for column, value in (("doi", doi), ("arxiv_id", arxiv_id)):
        if not value:
            continue
        row = source.store.record_by_identifier(column, value)
        if row:
            title, authors, year, record_doi = row
            return {"title": title or None, "authors": json.loads(authors or "[]") or None, "year": year,
                    "doi": record_doi or None}
    return None


def fill_from_datastores(library: Library, registry: DatastoreRegistry, doc_ids: Iterable[str]) -> int:
    """For each paper whose PDF left a field empty, take it from the first datastore record that matches.

    Returns how many papers gained a value. A datastore that cannot be read is skipped with a log
    line: filling in is a convenience, never a reason for an ingest to fail.
    """
    names = registry.names()
    if not names:
        return 0
    filled = 0
    for doc_id in doc_ids:
        document = library.document(doc_id)
        if not (document.bib.doi or document.bib.arxiv_id):
            continue
        if document.bib.title and document.bib.authors and document.bib.year:
            continue  # nothing missing
        for name in names:
            try:
                fields = _record_fields(registry.source(name), document)
            except EngineError as exc:
                log.warning("datastore %s not consulted for %s: %s", name, doc_id, exc)
                continue
            if fields is None:
                continue
            try:
                updated = import_metadata(library, doc_id, SOURCE_PREFIX + name, fields, fill_only=True)
            except MetadataError as exc:  # a record's malformed DOI or year costs the fill, not the ingest
                log.warning("record in datastore %s not used for %s: %s", name, doc_id, exc)
                continue
            filled += updated != document
            break
    return filled
