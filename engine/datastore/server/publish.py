"""Publishing an installed datastore to a PostgreSQL server: COPY in batches, resumable, indexes last.

Records and then passages are copied in batches; each batch and the count of rows done are
committed together, so a publish that is stopped (Ctrl-C, a lost connection, a full disk) resumes
after the last committed batch when it is run again. The indexes are built only once every row is
in (far faster than maintaining them row by row), then the stems' passage counts, then the
datastore is marked ready: a reader never searches a half-loaded datastore.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import engine
from engine.datastore.server.lexemes import FtsLexemes
from engine.datastore.server.schema import READY, SCHEMA_VERSION, check_schema_name, index_sql, table_sql
from engine.datastore.source import DatastoreSource, local_passage_id
from engine.errors import EngineError
from engine.index.faiss_index import FaissIndex
from engine.index.ids import passage_keys
from engine.index.storage import load_index
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress

log = logging.getLogger(__name__)

RECORD_BATCH = 5_000
PASSAGE_BATCH = 2_000
# The HNSW build is the longest step; it runs in one statement on the server, with this much memory
# (pgvector builds much faster when the graph fits; docs/scaling.md has the sizes).
BUILD_MEMORY = "1GB"


@dataclass(frozen=True)
class PublishReport:
    """What a publish did."""

    name: str
    schema: str
    records: int
    passages: int
    embedded: int
    embedding_model: str | None
    resumed: bool
    already_published: bool
    seconds: float


class PublishError(EngineError):
    """The datastore cannot be published to that server (another datastore there, no pgvector...)."""


def publish(source: DatastoreSource, conn: Any, conninfo_shown: str, *, schema: str, reader: str | None = None,
            replace: bool = False, progress: ProgressCallback = no_progress,
            cancel: CancelToken | None = None) -> PublishReport:
    """Copy ``source`` into ``schema`` on the server of ``conn`` (autocommit), then index it; resumes a stopped run."""
    started = time.monotonic()
    check_schema_name(schema)
    counts = source.store.counts()
    vectors = _VectorReader(source)
    meta_wanted = {"schema_version": str(SCHEMA_VERSION), "name": source.name,
                   "version": source.store.meta().get("version", ""), "records": str(counts["records"]),
                   "passages": str(counts["passages"]), "embedding_model": vectors.model_id or "",
                   "embedding_dimension": str(vectors.dimension or 0), "quire_version": engine.__version__}
    _ensure_extension(conn, conninfo_shown)
    existing = _existing_meta(conn, schema)
    if existing and replace:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
        existing = {}
    if existing:
        _check_same(existing, meta_wanted, schema, conninfo_shown)
        if existing.get("state") == READY:
            _grant(conn, schema, reader)
            return PublishReport(source.name, schema, counts["records"], counts["passages"], vectors.embedded,
                                 vectors.model_id, False, True, time.monotonic() - started)
    else:
        with conn.transaction():
            for statement in table_sql(schema, vectors.dimension or 1):
                conn.execute(statement)
            _set_meta(conn, schema, {**meta_wanted, "state": "loading", "records_done": "0", "passages_done": "0"})
    meta = _existing_meta(conn, schema)
    resumed = int(meta.get("records_done", "0")) > 0
    _copy_records(source, conn, schema, int(meta.get("records_done", "0")), counts["records"], progress, cancel)
    _copy_passages(source, conn, schema, vectors, int(meta.get("passages_done", "0")), counts["passages"],
                   progress, cancel)
    _build_indexes(conn, schema, progress, cancel)
    _grant(conn, schema, reader)
    return PublishReport(source.name, schema, counts["records"], counts["passages"], vectors.embedded,
                         vectors.model_id, resumed, False, time.monotonic() - started)


def _ensure_extension(conn: Any, conninfo_shown: str) -> None:
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except Exception as exc:  # the driver's error: no privilege, or pgvector not installed on the server
        raise PublishError(f"{conninfo_shown} has no pgvector extension and this role cannot create it ({exc}). "
                           "Ask the server's administrator to install pgvector and run CREATE EXTENSION vector "
                           "in this database.") from None


def _existing_meta(conn: Any, schema: str) -> dict[str, str]:
    found = conn.execute("SELECT to_regclass(%s)", (f"{schema}.meta",)).fetchone()
    if found is None or found[0] is None:
        return {}
    return {str(k): str(v) for k, v in conn.execute(f"SELECT key, value FROM {schema}.meta").fetchall()}


def _check_same(existing: dict[str, str], wanted: dict[str, str], schema: str, shown: str) -> None:
    """Refuse to resume into (or mix with) another datastore or another schema version."""
    if existing.get("schema_version") != wanted["schema_version"]:
        raise PublishError(f"The schema {schema!r} on {shown} holds a Quire datastore of schema version "
                           f"{existing.get('schema_version', 'unknown')}; this Quire writes version {SCHEMA_VERSION}. "
                           "Publish with --replace to rebuild it, or choose another --schema.")
    different = [key for key in ("name", "version", "records", "passages", "embedding_model")
                 if existing.get(key, "") != wanted[key]]
    if different:
        raise PublishError(f"The schema {schema!r} on {shown} holds another datastore ({existing.get('name')!r} "
                           f"{existing.get('version', '')}: its {', '.join(different)} differ). Publish with --replace "
                           "to replace it, or choose another --schema.")


def _set_meta(conn: Any, schema: str, values: dict[str, str]) -> None:
    for key, value in values.items():
        conn.execute(f"INSERT INTO {schema}.meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE "
                     "SET value = excluded.value", (key, value))


def _copy_records(source: DatastoreSource, conn: Any, schema: str, done: int, total: int,
                  progress: ProgressCallback, cancel: CancelToken | None) -> None:
    after = _last_rowid(conn, schema, "records")
    while True:
        _check(cancel)
        rows = source.store.query("SELECT rowid, id, title, year, url, authors, doi, arxiv_id FROM records "
                                  "WHERE rowid > ? ORDER BY rowid LIMIT ?", (after, RECORD_BATCH))
        if not rows:
            return
        with conn.transaction():
            with conn.cursor().copy(f"COPY {schema}.records (rowid, id, title, year, url, authors, doi, arxiv_id) "
                                    "FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            done += len(rows)
            _set_meta(conn, schema, {"records_done": str(done)})
        after = rows[-1][0]
        progress(Progress("publish", done, total, f"records {done:,} of {total:,}"))


def _copy_passages(source: DatastoreSource, conn: Any, schema: str, vectors: _VectorReader, done: int, total: int,
                   progress: ProgressCallback, cancel: CancelToken | None) -> None:
    after = _last_rowid(conn, schema, "passages")
    lexemes = FtsLexemes()
    try:
        while True:
            _check(cancel)
            rows = source.store.query(
                "SELECT p.rowid, p.record_rowid, p.ordinal, p.text, r.title, r.id FROM passages p JOIN records r "
                "ON r.rowid = p.record_rowid WHERE p.rowid > ? ORDER BY p.rowid LIMIT ?", (after, PASSAGE_BATCH))
            if not rows:
                return
            tokens = lexemes.of([(rowid, title, text) for rowid, _, _, text, title, _ in rows])
            found = vectors.read([local_passage_id(record_id, ordinal) for _, _, ordinal, _, _, record_id in rows])
            with conn.transaction():
                with conn.cursor().copy(f"COPY {schema}.passages (rowid, record_rowid, ordinal, text, length, "
                                        "lexemes, embedding) FROM STDIN") as copy:
                    for (rowid, record_rowid, ordinal, text, _title, _record_id), vector in zip(rows, found,
                                                                                              strict=True):
                        token = tokens[rowid]
                        copy.write_row((rowid, record_rowid, ordinal, text, token.length, token.tsvector,
                                        _vector_text(vector)))
                done += len(rows)
                _set_meta(conn, schema, {"passages_done": str(done)})
            after = rows[-1][0]
            progress(Progress("publish", done, total, f"passages {done:,} of {total:,}"))
    finally:
        lexemes.close()


def _last_rowid(conn: Any, schema: str, table: str) -> int:
    # Each batch commits with its count, so the highest rowid on the server is where this run resumes.
    return int(conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {schema}.{table}").fetchone()[0])


def _build_indexes(conn: Any, schema: str, progress: ProgressCallback, cancel: CancelToken | None) -> None:
    _set_meta(conn, schema, {"state": "indexing"})
    conn.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY}'")
    statements = index_sql(schema)
    steps = len(statements) + 2
    for number, statement in enumerate(statements):
        _check(cancel)
        progress(Progress("publish-index", number, steps, statement.split(" ON ")[0].replace("IF NOT EXISTS ", "")))
        conn.execute(statement)
    progress(Progress("publish-index", len(statements), steps, "counting each stem's passages"))
    with conn.transaction():
        conn.execute(f"DELETE FROM {schema}.terms")
        conn.execute(f"INSERT INTO {schema}.terms (stem, passages) SELECT word, ndoc FROM "
                     f"ts_stat('SELECT lexemes FROM {schema}.passages')")
        total_length = conn.execute(f"SELECT coalesce(sum(length), 0) FROM {schema}.passages").fetchone()[0]
        _set_meta(conn, schema, {"total_length": str(int(total_length)), "state": READY,
                                 "published_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    conn.execute(f"ANALYZE {schema}.records")
    conn.execute(f"ANALYZE {schema}.passages")
    conn.execute(f"ANALYZE {schema}.terms")
    progress(Progress("publish-index", steps, steps, "ready"))


def _grant(conn: Any, schema: str, reader: str | None) -> None:
    """Let the read-only role ``reader`` search the datastore (and nothing more)."""
    if not reader:
        return
    psycopg = __import__("psycopg")
    role = psycopg.sql.Identifier(reader)
    conn.execute(psycopg.sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(psycopg.sql.Identifier(schema), role))
    conn.execute(psycopg.sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(
        psycopg.sql.Identifier(schema), role))


def _check(cancel: CancelToken | None) -> None:
    if cancel is not None:
        cancel.check()


def _vector_text(vector: np.ndarray | None) -> str | None:
    if vector is None:
        return None
    return "[" + ",".join(f"{value:.7g}" for value in vector.tolist()) + "]"


class _VectorReader:
    """The datastore's vectors, read back from its saved index (a pack brings no embedding cache)."""

    def __init__(self, source: DatastoreSource) -> None:
        header = source.index_header()
        self.model_id = header.model_id if header is not None else None
        self.dimension = header.dimension if header is not None else None
        self.embedded = header.count if header is not None else 0
        self._index: FaissIndex | None = None
        if header is not None:
            self._index = load_index(source.index_path, model_id=header.model_id)
            faiss_index = self._index.faiss_index
            if hasattr(faiss_index, "set_direct_map_type"):  # IVF: reconstructing by id needs its id map
                import faiss

                faiss_index.set_direct_map_type(faiss.DirectMap.Hashtable)  # type: ignore[attr-defined]

    def read(self, local_ids: Sequence[str]) -> list[np.ndarray | None]:
        """One vector per id (None for a passage not embedded yet)."""
        index = self._index
        if index is None:
            return [None] * len(local_ids)
        present = [local_id in index for local_id in local_ids]
        wanted = [local_id for local_id, held in zip(local_ids, present, strict=True) if held]
        matrix = index.faiss_index.reconstruct_batch(passage_keys(wanted)) if wanted else np.zeros((0, 1))
        rows = iter(matrix)
        return [next(rows) if held else None for held in present]


def report_line(report: PublishReport) -> str:
    """One line about a publish, for the CLI."""
    if report.already_published:
        return f"{report.name} is already published in the schema {report.schema}; nothing to do."
    return (f"published {report.name}: {report.records:,} records, {report.passages:,} passages "
            f"({report.embedded:,} embedded by {report.embedding_model or 'no model'}) into the schema "
            f"{report.schema} in {report.seconds:,.1f} s{' (resumed)' if report.resumed else ''}.")

