"""The tables Quire writes in a PostgreSQL schema, their version, and the check every reader makes first.

One PostgreSQL schema (``quire`` unless told otherwise) holds one datastore:

- ``meta``: key/value facts (schema version, name, embedding model, passage count, total length, state);
- ``records``: one row per paper, with the bibliographic fields a local datastore keeps;
- ``passages``: text, length in tokens, the stems as a ``tsvector`` (the exact tokens and Porter stems
  of the local FTS5 index, written by Quire, so the server's BM25 matches the local one) and the
  embedding as ``halfvec`` (float16: half the bytes of float32, the same neighbours; docs/scaling.md);
- ``terms``: each stem's passage count (BM25's IDF and the spelling corrector's vocabulary).

Indexes (primary keys, GIN on the stems, HNSW on the embeddings) are built after the load, which is
several times faster than maintaining them row by row.
"""

from __future__ import annotations

import re
from typing import Any

from engine.errors import EngineError

SCHEMA_VERSION = 1
DEFAULT_SCHEMA = "quire"
# HNSW build parameters. At 1M synthetic passages and the ef_search search uses (400), pgvector's
# default ef_construction 64 found 0.93 of the exact top 10, 128 found 0.996 for a 1.6x longer build
# and the same index size (benchmarks/pg_datastore.py, docs/scaling.md).
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128
READY = "ready"
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def check_schema_name(schema: str) -> str:
    """``schema`` if it can name a PostgreSQL schema unquoted, else a message saying what is allowed."""
    if not _IDENTIFIER.match(schema):
        raise EngineError(f"{schema!r} cannot name the datastore's PostgreSQL schema: use lower-case letters, digits "
                          "and '_', starting with a letter (at most 63).")
    return schema


def table_sql(schema: str, dimension: int) -> list[str]:
    """The statements that create the (index-less) tables; the caller runs them in one transaction."""
    s = check_schema_name(schema)
    return [
        f"CREATE SCHEMA IF NOT EXISTS {s}",
        f"CREATE TABLE IF NOT EXISTS {s}.meta (key text PRIMARY KEY, value text NOT NULL)",
        f"""CREATE TABLE IF NOT EXISTS {s}.records (
            rowid bigint NOT NULL, id text NOT NULL, title text NOT NULL, year integer,
            url text NOT NULL DEFAULT '', authors text NOT NULL DEFAULT '[]', doi text NOT NULL DEFAULT '',
            arxiv_id text NOT NULL DEFAULT '')""",
        f"""CREATE TABLE IF NOT EXISTS {s}.passages (
            rowid bigint NOT NULL, record_rowid bigint NOT NULL, ordinal integer NOT NULL, text text NOT NULL,
            length integer NOT NULL, lexemes tsvector NOT NULL, embedding halfvec({int(dimension)}))""",
        f'CREATE TABLE IF NOT EXISTS {s}.terms (stem text COLLATE "C" PRIMARY KEY, passages integer NOT NULL)',
    ]


def index_sql(schema: str) -> list[str]:
    """The indexes built once every row is loaded, cheapest first (each statement is resumable on its own)."""
    s = check_schema_name(schema)
    return [
        f"CREATE UNIQUE INDEX IF NOT EXISTS records_rowid ON {s}.records (rowid)",
        f"CREATE UNIQUE INDEX IF NOT EXISTS records_id ON {s}.records (id)",
        f"CREATE INDEX IF NOT EXISTS records_doi ON {s}.records (doi) WHERE doi != ''",
        f"CREATE UNIQUE INDEX IF NOT EXISTS passages_rowid ON {s}.passages (rowid)",
        f"CREATE UNIQUE INDEX IF NOT EXISTS passages_record ON {s}.passages (record_rowid, ordinal)",
        f"CREATE INDEX IF NOT EXISTS passages_lexemes ON {s}.passages USING gin (lexemes)",
        f"CREATE INDEX IF NOT EXISTS passages_embedding ON {s}.passages USING hnsw (embedding halfvec_ip_ops) "
        f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})",
    ]


def read_meta(conn: Any, schema: str) -> dict[str, str]:
    """The datastore's meta table as a dict (raises the driver's error when the table is missing)."""
    rows = conn.execute(f"SELECT key, value FROM {check_schema_name(schema)}.meta").fetchall()
    return {str(key): str(value) for key, value in rows}


def schema_problem(conn: Any, schema: str) -> str | None:
    """Why the server's ``schema`` cannot be searched by this Quire (None when it can)."""
    vector = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if vector is None:
        return ("has no pgvector extension in this database; ask the server's administrator to run "
                "CREATE EXTENSION vector there.")
    found = conn.execute("SELECT to_regclass(%s)", (f"{schema}.meta",)).fetchone()
    if found is None or found[0] is None:
        return (f"holds no Quire datastore in the schema {schema!r} (or this role may not see it); publish one "
                "with `quire datastore publish PACK URL`, or give the schema with --schema.")
    meta = read_meta(conn, schema)
    version = meta.get("schema_version", "")
    if version != str(SCHEMA_VERSION):
        return (f"holds a Quire datastore of schema version {version or 'unknown'}, but this Quire reads version "
                f"{SCHEMA_VERSION}; publish it again with this Quire, or use the Quire that published it.")
    if meta.get("state") != READY:
        return (f"is still being published ({meta.get('state', 'no state')}); finish it with "
                "`quire datastore publish` (it resumes), then search again.")
    return None
