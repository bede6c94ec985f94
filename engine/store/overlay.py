"""The user's saved metadata corrections laid over a document's stored rows (engine.store.edits saves
them; the catalog lays them over again whenever a PDF is re-read, so a re-read never undoes them)."""

from __future__ import annotations

import json
import sqlite3


def apply_edits(conn: sqlite3.Connection, doc_id: str) -> None:
    """Lay the saved corrections of ``doc_id`` over its document row and its passages' search titles."""
    row = conn.execute("SELECT edits FROM document_edits WHERE doc_id=?", (doc_id,)).fetchone()
    if row is None:
        return
    edits = json.loads(row[0])
    values = {name: json.dumps(value) if name == "authors" else value for name, value in edits.items()
              if name in ("title", "authors", "year", "doi")}
    if values:
        assignments = ", ".join(f"{name}=?" for name in values)  # names from the fixed list above
        conn.execute(f"UPDATE documents SET {assignments} WHERE id=?", (*values.values(), doc_id))
    if "title" in edits:
        conn.execute("UPDATE passages_fts SET title=? WHERE rowid IN (SELECT rowid FROM passages WHERE doc_id=?)",
                     (edits["title"], doc_id))
