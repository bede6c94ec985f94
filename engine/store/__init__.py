"""The only code that touches SQLite: documents, pages, passages, rectangles and the FTS index."""

from __future__ import annotations

from engine.store.catalog import FileRecord, Library

__all__ = ["FileRecord", "Library"]
