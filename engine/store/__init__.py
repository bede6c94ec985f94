"""The library catalog: documents, pages, passages, rectangles, the FTS index and saved answers.

Datastores (engine.datastore) and the embedding cache (engine.embed) keep their own SQLite files;
all of them open and write through engine.sqlite.
"""

from __future__ import annotations

from engine.store.catalog import FileRecord, Library

__all__ = ["FileRecord", "Library"]
