"""The catalog's tables, its schema version and the migrations between versions.

A migration is a function from version N to N+1, run inside one transaction when an older
catalog is opened; a catalog newer than this program is refused rather than damaged.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from engine.errors import StoreError
from engine.sqlite import transaction

SCHEMA_VERSION = 5

_V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    path TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    authors TEXT NOT NULL DEFAULT '[]',
    year INTEGER,
    doi TEXT NOT NULL DEFAULT '',
    arxiv_id TEXT NOT NULL DEFAULT '',
    abstract TEXT NOT NULL DEFAULT '',
    page_count INTEGER NOT NULL DEFAULT 0,
    passage_count INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    error TEXT NOT NULL DEFAULT '',
    file_size INTEGER NOT NULL DEFAULT 0,
    added_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_hash ON documents(content_hash);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    size INTEGER NOT NULL,
    mtime REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS files_doc ON files(doc_id);
CREATE TABLE IF NOT EXISTS pages (
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    width REAL NOT NULL,
    height REAL NOT NULL,
    word_count INTEGER NOT NULL,
    has_text_layer INTEGER NOT NULL,
    ocr_used INTEGER NOT NULL,
    PRIMARY KEY (doc_id, number)
);
CREATE TABLE IF NOT EXISTS passages (
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
);
CREATE INDEX IF NOT EXISTS passages_doc ON passages(doc_id, ordinal);
CREATE TABLE IF NOT EXISTS passage_rects (
    passage_rowid INTEGER NOT NULL REFERENCES passages(rowid) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    page INTEGER NOT NULL,
    x0 REAL NOT NULL, y0 REAL NOT NULL, x1 REAL NOT NULL, y1 REAL NOT NULL,
    PRIMARY KEY (passage_rowid, seq)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
    title, text, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""

Migration = Callable[[sqlite3.Connection], None]


def _v2_answers(conn: sqlite3.Connection) -> None:
    """Version 2: past answers (the UI reopens earlier questions); the record is the answer as JSON."""
    conn.execute("CREATE TABLE IF NOT EXISTS answers (id TEXT PRIMARY KEY, question TEXT NOT NULL, "
                 "created_at REAL NOT NULL, mode TEXT NOT NULL, cancelled INTEGER NOT NULL, record TEXT NOT NULL)")
    conn.execute("CREATE INDEX IF NOT EXISTS answers_created ON answers(created_at)")


def _v3_passage_kinds(conn: sqlite3.Connection) -> None:
    """Version 3: each passage says what it is (text, caption, table, figure); older passages are text."""
    # A catalog made by the current CREATE statements but stamped with an older version already has
    # the column: adding it again would fail the whole upgrade.
    columns = {row[1] for row in conn.execute("PRAGMA table_info(passages)")}
    if "kind" not in columns:
        conn.execute("ALTER TABLE passages ADD COLUMN kind TEXT NOT NULL DEFAULT 'text'")


def _v4_edits_and_collections(conn: sqlite3.Connection) -> None:
    """Version 4: metadata the user corrected (kept apart, so it outlives a re-read of the PDF), the
    collections a paper belongs to (from Zotero), and which Zotero item each imported paper came from."""
    conn.execute("CREATE TABLE IF NOT EXISTS document_edits (doc_id TEXT PRIMARY KEY, edits TEXT NOT NULL, "
                 "edited_at REAL NOT NULL)")
    conn.execute("CREATE TABLE IF NOT EXISTS document_collections (doc_id TEXT NOT NULL, collection TEXT NOT NULL, "
                 "source TEXT NOT NULL, PRIMARY KEY (doc_id, collection))")
    conn.execute("CREATE TABLE IF NOT EXISTS zotero_items (item TEXT PRIMARY KEY, doc_id TEXT NOT NULL, "
                 "modified TEXT NOT NULL, file_path TEXT NOT NULL)")


def _v5_venue_and_imported(conn: sqlite3.Connection) -> None:
    """Version 5: each paper's venue (journal or proceedings), and metadata from other sources (a Zotero
    import, a datastore record) kept apart from the user's own corrections, so a re-import cannot undo an edit.

    Zotero values an older catalog stored as corrections stay corrections: they cannot be told apart any
    more, and keeping them where they are loses nothing.
    """
    columns = {row[1] for row in conn.execute("PRAGMA table_info(documents)")}
    if "venue" not in columns:
        conn.execute("ALTER TABLE documents ADD COLUMN venue TEXT NOT NULL DEFAULT ''")
    conn.execute("CREATE TABLE IF NOT EXISTS document_imported (doc_id TEXT NOT NULL, source TEXT NOT NULL, "
                 "fields TEXT NOT NULL, fill_only INTEGER NOT NULL, imported_at REAL NOT NULL, "
                 "PRIMARY KEY (doc_id, source))")


# MIGRATIONS[n] upgrades a catalog from version n to n + 1.
MIGRATIONS: dict[int, Migration] = {1: _v2_answers, 2: _v3_passage_kinds, 3: _v4_edits_and_collections,
                                    4: _v5_venue_and_imported}


def current_version(conn: sqlite3.Connection) -> int:
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
            # One statement at a time: executescript() would commit mid-way.
            for statement in _V1.split(";\n"):
                if statement.strip():
                    conn.execute(statement)
            version = 1
        while version < target:
            step = migrations.get(version)
            if step is None:
                raise StoreError(f"No migration from library schema {version}; update Quire.")
            step(conn)
            version += 1
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(version),))
    return version
