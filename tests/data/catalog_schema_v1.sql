-- The catalog's version-1 tables as hand-written SQL made them before sqlite-utils declared them:
-- the reference tests/engine/test_catalog_schema.py compares with, and the old path benchmarks/schema_speed.py times.
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
