"""The catalog's tables, its schema version and the migrations between versions.

A migration is a function from version N to N+1, run inside one transaction when an older
catalog is opened; a catalog newer than this program is refused rather than damaged.

Tables, indexes and added columns are declared through sqlite-utils, whose calls join the open
transaction (as savepoints) instead of committing. Three objects stay SQL, each saying why.
sqlite-utils is imported only when the schema changes: opening an up-to-date catalog, which every
command does, reads the version with plain SQL.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.errors import StoreError
from engine.sqlite import transaction
from engine.store.vocabulary import TOKENIZER

if TYPE_CHECKING:
    import sqlite_utils
    from sqlite_utils.db import ForeignKey

SCHEMA_VERSION = 8

Migration = Callable[[sqlite3.Connection], None]

# SQL: sqlite-utils' create() cannot declare a UNIQUE column (passage ids are looked up through it).
_PASSAGES = """CREATE TABLE IF NOT EXISTS passages (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    page_start INTEGER NOT NULL,
    page_end INTEGER NOT NULL,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    is_reference INTEGER NOT NULL,
    words BLOB NOT NULL
)"""
# SQL: sqlite-utils cannot make a WITHOUT ROWID table (rectangles are stored in their key's order).
_PASSAGE_RECTS = """CREATE TABLE IF NOT EXISTS passage_rects (
    passage_rowid INTEGER NOT NULL REFERENCES passages(rowid) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    page INTEGER NOT NULL,
    x0 REAL NOT NULL, y0 REAL NOT NULL, x1 REAL NOT NULL, y1 REAL NOT NULL,
    PRIMARY KEY (passage_rowid, seq)
) WITHOUT ROWID"""
# SQL: enable_fts() only indexes an existing table's columns (content=, triggers); this index holds
# the document title beside each passage's text, written by the catalog itself.
_PASSAGES_FTS = f"""CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
    title, text, tokenize = '{TOKENIZER}'
)"""


def sqlite_utils_db(conn: sqlite3.Connection) -> sqlite_utils.Database:
    """sqlite-utils over ``conn`` that changes nothing about it: no plugins, no connection PRAGMAs."""
    import sqlite_utils

    return sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)


def _cascade(table: str, column: str, other_table: str, other_column: str = "id") -> ForeignKey:
    """A foreign key whose rows go when the row they point at goes."""
    from sqlite_utils.db import ForeignKey

    return ForeignKey(table, column, other_table, other_column, on_delete="CASCADE")


def _v1_library(conn: sqlite3.Connection) -> None:
    """Version 1: documents, the files that hold them, their pages, passages, rectangles and text index."""
    db = sqlite_utils_db(conn)
    db.table("meta").create({"key": str, "value": str}, pk="key", not_null={"value"}, if_not_exists=True)
    documents = db.table("documents")
    documents.create(
        {"id": str, "content_hash": str, "path": str, "title": str, "authors": str, "year": int, "doi": str,
         "arxiv_id": str, "abstract": str, "page_count": int, "passage_count": int, "status": str, "error": str,
         "file_size": int, "added_at": float, "updated_at": float},
        pk="id", not_null={"content_hash", "path", "title", "authors", "doi", "arxiv_id", "abstract", "page_count",
                           "passage_count", "status", "error", "file_size", "added_at", "updated_at"},
        defaults={"title": "", "authors": "[]", "doi": "", "arxiv_id": "", "abstract": "", "error": "",
                  "page_count": 0, "passage_count": 0, "file_size": 0},
        if_not_exists=True)
    documents.create_index(["content_hash"], index_name="documents_hash", if_not_exists=True)
    files = db.table("files")
    files.create({"path": str, "doc_id": str, "size": int, "mtime": float}, pk="path",
                 not_null={"doc_id", "size", "mtime"}, foreign_keys=[_cascade("files", "doc_id", "documents")],
                 if_not_exists=True)
    files.create_index(["doc_id"], index_name="files_doc", if_not_exists=True)
    db.table("pages").create(
        {"doc_id": str, "number": int, "width": float, "height": float, "word_count": int, "has_text_layer": int,
         "ocr_used": int},
        pk=("doc_id", "number"),
        not_null={"doc_id", "number", "width", "height", "word_count", "has_text_layer", "ocr_used"},
        foreign_keys=[_cascade("pages", "doc_id", "documents")], if_not_exists=True)
    conn.execute(_PASSAGES)
    db.table("passages").create_index(["doc_id", "ordinal"], index_name="passages_doc", if_not_exists=True)
    conn.execute(_PASSAGE_RECTS)
    conn.execute(_PASSAGES_FTS)


def _v2_answers(conn: sqlite3.Connection) -> None:
    """Version 2: past answers (the UI reopens earlier questions); the record is the answer as JSON."""
    answers = sqlite_utils_db(conn).table("answers")
    answers.create({"id": str, "question": str, "created_at": float, "mode": str, "cancelled": int, "record": str},
                   pk="id", not_null={"question", "created_at", "mode", "cancelled", "record"}, if_not_exists=True)
    answers.create_index(["created_at"], index_name="answers_created", if_not_exists=True)


def _v3_passage_kinds(conn: sqlite3.Connection) -> None:
    """Version 3: each passage says what it is (text, caption, table, figure); older passages are text."""
    passages = sqlite_utils_db(conn).table("passages")
    # A catalog made by the current CREATE statements but stamped with an older version already has
    # the column: adding it again would fail the whole upgrade.
    if "kind" not in passages.columns_dict:
        passages.add_column("kind", str, not_null_default="text")


def _v4_edits_and_collections(conn: sqlite3.Connection) -> None:
    """Version 4: metadata the user corrected (kept apart, so it outlives a re-read of the PDF), the
    collections a paper belongs to (from Zotero), and which Zotero item each imported paper came from."""
    db = sqlite_utils_db(conn)
    db.table("document_edits").create({"doc_id": str, "edits": str, "edited_at": float}, pk="doc_id",
                                      not_null={"edits", "edited_at"}, if_not_exists=True)
    db.table("document_collections").create({"doc_id": str, "collection": str, "source": str},
                                            pk=("doc_id", "collection"), not_null={"doc_id", "collection", "source"},
                                            if_not_exists=True)
    db.table("zotero_items").create({"item": str, "doc_id": str, "modified": str, "file_path": str}, pk="item",
                                    not_null={"doc_id", "modified", "file_path"}, if_not_exists=True)


def _v5_venue_and_imported(conn: sqlite3.Connection) -> None:
    """Version 5: each paper's venue (journal or proceedings), and metadata from other sources (a Zotero
    import, a datastore record) kept apart from the user's own corrections, so a re-import cannot undo an edit.

    Zotero values an older catalog stored as corrections stay corrections: they cannot be told apart any
    more, and keeping them where they are loses nothing.
    """
    db = sqlite_utils_db(conn)
    documents = db.table("documents")
    if "venue" not in documents.columns_dict:
        documents.add_column("venue", str, not_null_default="")
    db.table("document_imported").create(
        {"doc_id": str, "source": str, "fields": str, "fill_only": int, "imported_at": float},
        pk=("doc_id", "source"), not_null={"doc_id", "source", "fields", "fill_only", "imported_at"},
        if_not_exists=True)


def _v6_passage_languages(conn: sqlite3.Connection) -> None:
    """Version 6: each passage's language (engine/text/language.py), which keyword search cuts and stems
    its words by; older passages are "" (not known), which indexes them exactly as before."""
    passages = sqlite_utils_db(conn).table("passages")
    if "language" not in passages.columns_dict:
        passages.add_column("language", str, not_null_default="")


def _v7_table_rows(conn: sqlite3.Connection) -> None:
    """Version 7: a "table row" passage keeps its table's label, headers and its cells with their boxes
    (JSON, empty for every other passage); older catalogs keep their tables as text until re-read."""
    passages = sqlite_utils_db(conn).table("passages")
    if "table_row" not in passages.columns_dict:
        passages.add_column("table_row", str, not_null_default="")


def _v8_figure_regions(conn: sqlite3.Connection) -> None:
    """Version 8: a figure's caption and labels keep the figure's region on its page (JSON page and box, empty
    for every other passage); older catalogs show their figures' captions only, until the paper is read again."""
    passages = sqlite_utils_db(conn).table("passages")
    if "figure_region" not in passages.columns_dict:
        passages.add_column("figure_region", str, not_null_default="")


# MIGRATIONS[n] upgrades a catalog from version n to n + 1.
MIGRATIONS: dict[int, Migration] = {1: _v2_answers, 2: _v3_passage_kinds, 3: _v4_edits_and_collections,
                                    4: _v5_venue_and_imported, 5: _v6_passage_languages, 6: _v7_table_rows,
                                    7: _v8_figure_regions}


def current_version(conn: sqlite3.Connection) -> int:
    # Plain SQL: every open reads this, and importing sqlite-utils (~40 ms) would slow every command.
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if not has_meta:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row else 0


def ensure_schema(conn: sqlite3.Connection, migrations: dict[int, Migration] | None = None,
                  target: int = SCHEMA_VERSION) -> int:
    """Create or upgrade the schema in one transaction; return the version now in place."""
    migrations = MIGRATIONS if migrations is None else migrations
    version = current_version(conn)
    if version > target:
        raise StoreError(f"This library was written by a newer Quire (schema {version}, this one knows "
                         f"{target}); update Quire to open it.")
    if version == target:
        return version
    with transaction(conn):
        if version == 0:
            _v1_library(conn)
            version = 1
        while version < target:
            step = migrations.get(version)
            if step is None:
                raise StoreError(f"No migration from library schema {version}; update Quire.")
            step(conn)
            version += 1
        sqlite_utils_db(conn).table("meta").insert({"key": "schema_version", "value": str(version)}, replace=True)
    return version
