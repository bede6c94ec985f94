"""Metadata from other sources and the user's corrections laid over a document's stored rows
(engine.store.edits saves them; the catalog lays them over again whenever a PDF is re-read, so a
re-read never undoes them).

The layers, in order, each over the one before:

1. what the PDF gave (the document row as ingest wrote it);
2. a datastore record of the same paper, only in fields the PDF left empty (``fill_only``);
3. an import such as Zotero's, over the extracted values (table ``document_imported``);
4. the user's own corrections, over everything (table ``document_edits``).
"""

from __future__ import annotations

import json
import sqlite3

from engine.text.keywords import title_keywords

FIELDS = ("title", "authors", "year", "doi", "venue")


def _is_empty(value: object) -> bool:
    return value is None or value == "" or value == "[]"


def apply_edits(conn: sqlite3.Connection, doc_id: str) -> None:
    """Lay imported metadata, then the user's corrections, over ``doc_id``'s row and its search titles."""
    layers: list[tuple[dict[str, object], bool]] = [
        (json.loads(fields), bool(fill_only)) for fields, fill_only in conn.execute(
            # Fills first (they look only at the PDF's values), then imports in a stable order.
            "SELECT fields, fill_only FROM document_imported WHERE doc_id=? ORDER BY fill_only DESC, source",
            (doc_id,))]
    row = conn.execute("SELECT edits FROM document_edits WHERE doc_id=?", (doc_id,)).fetchone()
    if row is not None:
        layers.append((json.loads(row[0]), False))
    if not layers:
        return
    current = conn.execute("SELECT title, authors, year, doi, venue FROM documents WHERE id=?", (doc_id,)).fetchone()
    if current is None:
        return
    values: dict[str, object] = {}
    for layer, fill_only in layers:
        for name, value in layer.items():
            if name not in FIELDS:
                continue
            stored = json.dumps(value) if name == "authors" else value
            if fill_only and (_is_empty(stored) or not _is_empty(current[FIELDS.index(name)])):
                continue
            values[name] = stored
    values = {name: value for name, value in values.items() if value != current[FIELDS.index(name)]}
    if values:
        assignments = ", ".join(f"{name}=?" for name in values)  # names from the fixed list FIELDS
        conn.execute(f"UPDATE documents SET {assignments} WHERE id=?", (*values.values(), doc_id))
    if "title" in values:
        conn.execute("UPDATE passages_fts SET title=? WHERE rowid IN (SELECT rowid FROM passages WHERE doc_id=?)",
                     (title_keywords(str(values["title"])), doc_id))
