"""The catalog's schema as sqlite-utils declares it is the one the hand-written CREATE statements made.

The reference below is history: the statements the catalog was created and migrated with before its
tables were declared through sqlite-utils. A catalog made by either, at any version, must migrate to
the same tables, columns, defaults, keys, indexes and foreign keys.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.sqlite import connect
from engine.store.schema import MIGRATIONS, SCHEMA_VERSION, Migration, current_version, ensure_schema
from engine.store.vocabulary import TOKENIZER

REFERENCE_V1 = (Path(__file__).resolve().parents[1] / "data" / "catalog_schema_v1.sql").read_text(encoding="utf-8")
# REFERENCE_STEPS[n]: what took a catalog from version n to n + 1.
REFERENCE_STEPS: dict[int, list[str]] = {
    1: ["CREATE TABLE IF NOT EXISTS answers (id TEXT PRIMARY KEY, question TEXT NOT NULL, created_at REAL NOT NULL, "
        "mode TEXT NOT NULL, cancelled INTEGER NOT NULL, record TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS answers_created ON answers(created_at)"],
    2: ["ALTER TABLE passages ADD COLUMN kind TEXT NOT NULL DEFAULT 'text'"],
    3: ["CREATE TABLE IF NOT EXISTS document_edits (doc_id TEXT PRIMARY KEY, edits TEXT NOT NULL, "
        "edited_at REAL NOT NULL)",
        "CREATE TABLE IF NOT EXISTS document_collections (doc_id TEXT NOT NULL, collection TEXT NOT NULL, "
        "source TEXT NOT NULL, PRIMARY KEY (doc_id, collection))",
        "CREATE TABLE IF NOT EXISTS zotero_items (item TEXT PRIMARY KEY, doc_id TEXT NOT NULL, "
        "modified TEXT NOT NULL, file_path TEXT NOT NULL)"],
    4: ["ALTER TABLE documents ADD COLUMN venue TEXT NOT NULL DEFAULT ''",
        "CREATE TABLE IF NOT EXISTS document_imported (doc_id TEXT NOT NULL, source TEXT NOT NULL, "
        "fields TEXT NOT NULL, fill_only INTEGER NOT NULL, imported_at REAL NOT NULL, PRIMARY KEY (doc_id, source))"],
    5: ["ALTER TABLE passages ADD COLUMN language TEXT NOT NULL DEFAULT ''"],
    6: ["ALTER TABLE passages ADD COLUMN table_row TEXT NOT NULL DEFAULT ''"],
    7: ["ALTER TABLE passages ADD COLUMN figure_region TEXT NOT NULL DEFAULT ''"],
}


def reference_catalog(path: Path, version: int) -> sqlite3.Connection:
    """A catalog at ``version`` as the hand-written statements made it."""
    conn = connect(path)
    conn.execute("BEGIN")
    for statement in REFERENCE_V1.split(";\n"):
        if statement.strip():
            conn.execute(statement)
    for step in range(1, version):
        for statement in REFERENCE_STEPS[step]:
            conn.execute(statement)
    conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(version),))
    conn.execute("COMMIT")
    return conn


def describe(conn: sqlite3.Connection) -> dict[str, Any]:
    """Everything about a schema that behaviour depends on, read back from SQLite (not from its SQL text)."""
    schema: dict[str, Any] = {}
    for kind, name, table, sql in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master "
                                               "WHERE name NOT LIKE 'sqlite_%' ORDER BY name"):
        entry: dict[str, Any] = {"type": kind, "table": table}
        if kind == "table" and sql.upper().startswith("CREATE VIRTUAL"):
            entry["sql"] = " ".join(sql.split()).replace("IF NOT EXISTS ", "")
        elif kind == "table":
            entry["columns"] = [row[1:] for row in conn.execute(f'PRAGMA table_info("{name}")')]
            entry["without_rowid"] = conn.execute(f'SELECT wr, strict FROM pragma_table_list("{name}")').fetchone()
            entry["foreign_keys"] = sorted(row[1:] for row in conn.execute(f'PRAGMA foreign_key_list("{name}")'))
            entry["indexes"] = sorted(
                (index_name if origin == "c" else origin, unique, partial,
                 [row[2] for row in conn.execute(f'PRAGMA index_info("{index_name}")')])
                for _seq, index_name, unique, origin, partial in conn.execute(f'PRAGMA index_list("{name}")'))
        schema[name] = entry
    return schema


def test_a_new_catalog_has_the_schema_the_create_statements_made(tmp_path: Path) -> None:
    reference = reference_catalog(tmp_path / "reference.db", SCHEMA_VERSION)
    new = connect(tmp_path / "new.db")
    assert ensure_schema(new) == SCHEMA_VERSION

    expected, made = describe(reference), describe(new)
    assert made == expected
    assert {"documents", "passages", "passage_rects", "passages_fts", "answers", "document_imported"} <= set(made)
    assert made["passage_rects"]["without_rowid"] == (1, 0)
    assert ("documents_hash", 0, 0, ["content_hash"]) in made["documents"]["indexes"]
    assert ("u", 1, 0, ["id"]) in made["passages"]["indexes"]  # the UNIQUE passage id
    assert f"tokenize = '{TOKENIZER}'" in made["passages_fts"]["sql"]
    reference.close()
    new.close()


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_an_older_catalog_migrates_to_the_current_schema_and_keeps_its_rows(tmp_path: Path, version: int) -> None:
    old = reference_catalog(tmp_path / "old.db", version)
    old.execute("INSERT INTO documents(id, content_hash, path, status, added_at, updated_at) "
                "VALUES ('d1', 'h1', '/p/a.pdf', 'indexed', 1, 1)")
    old.execute("INSERT INTO passages(id, doc_id, ordinal, text, page_start, page_end, char_start, char_end, "
                "content_hash, is_reference, words) VALUES ('p1', 'd1', 0, 'text', 1, 1, 0, 4, 'c1', 0, x'')")
    old.execute("INSERT INTO passages_fts(rowid, title, text) VALUES (1, '', 'graphene')")

    assert ensure_schema(old) == SCHEMA_VERSION

    reference = reference_catalog(tmp_path / "reference.db", SCHEMA_VERSION)
    assert describe(old) == describe(reference)
    assert old.execute("SELECT title, venue FROM documents").fetchall() == [("", "")]
    assert old.execute("SELECT id, kind FROM passages").fetchall() == [("p1", "text")]
    assert old.execute("SELECT rowid FROM passages_fts WHERE passages_fts MATCH 'graphene'").fetchall() == [(1,)]
    old.close()
    reference.close()


def test_an_upgrade_that_fails_midway_leaves_the_old_catalog_whole(tmp_path: Path) -> None:
    # sqlite-utils commits on its own outside a transaction; inside ours its writes must wait for it.
    conn = reference_catalog(tmp_path / "old.db", 1)
    before = describe(conn)

    def fail(_: sqlite3.Connection) -> None:
        raise RuntimeError("disk full")

    migrations: dict[int, Migration] = {**MIGRATIONS, 4: fail}
    with pytest.raises(RuntimeError, match="disk full"):
        ensure_schema(conn, migrations)

    assert not conn.in_transaction
    assert current_version(conn) == 1
    assert describe(conn) == before  # no answers, no kind column, no edits tables
    conn.close()


def test_opening_an_up_to_date_catalog_does_not_load_sqlite_utils(tmp_path: Path) -> None:
    catalog = tmp_path / "library.db"
    ensure_schema(connect(catalog))
    probe = ("import sys\nfrom pathlib import Path\nfrom engine.store import Library\n"
             f"Library(Path({str(catalog)!r})).close()\nassert 'sqlite_utils' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=60)
