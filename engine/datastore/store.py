"""A datastore's own SQLite file: records (with their original ids), passages and an FTS5 index.

The only code that touches ``datastore.db`` (a pack's file is checked before it is installed by
``contents.py``, on its own bounded connection, and the shared FTS5 vocabulary queries are
``engine/store/vocabulary.py``'s). The FTS5 table has the library's ``(title, text)``
columns and tokenizer, so one query builder and one bm25 weighting serve both. It is
contentless (``content=''``): the text already lives in ``passages``, and a datastore is only
ever appended to, never edited, so the index need not store a second copy of every word.

Imports write in batches, one transaction each, recording how many lines of the input file are
done; a killed import resumes after the last committed batch.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from engine.datastore.reader import LineProblem, Record
from engine.disk import OPEN_ROOM, disk_full_message, is_disk_full
from engine.errors import StoreError
from engine.retrieve.dedupe import normalize_title
from engine.retrieve.fts import bm25_expression
from engine.sqlite import connect, connect_read_only, transaction, use_wal, writable_place
from engine.store.vocabulary import TOKENIZER
from engine.text.keywords import keyword_text, title_keywords
from engine.text.language import detect_language

SCHEMA_VERSION = 1
# Problems kept per import (the count is always exact): enough to fix a file, bounded for a bad one.
MAX_STORED_PROBLEMS = 10_000

# Hand-written, not sqlite-utils: three of its tables need UNIQUE constraints and two of its indexes
# are partial, which sqlite-utils' create() and create_index() cannot declare.
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS imports (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    fingerprint TEXT NOT NULL UNIQUE,
    lines_done INTEGER NOT NULL DEFAULT 0,
    finished INTEGER NOT NULL DEFAULT 0,
    ended_early TEXT NOT NULL DEFAULT '',
    problem_count INTEGER NOT NULL DEFAULT 0,
    started_at REAL NOT NULL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS problems (
    import_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    year INTEGER,
    url TEXT NOT NULL DEFAULT '',
    authors TEXT NOT NULL DEFAULT '[]',
    doi TEXT NOT NULL DEFAULT '',
    arxiv_id TEXT NOT NULL DEFAULT '',
    norm_title TEXT NOT NULL DEFAULT '',
    origin TEXT NOT NULL DEFAULT '',
    import_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    word_count INTEGER NOT NULL,
    passage_count INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS records_doi ON records(doi) WHERE doi != '';
CREATE INDEX IF NOT EXISTS records_arxiv ON records(arxiv_id) WHERE arxiv_id != '';
CREATE INDEX IF NOT EXISTS records_title ON records(norm_title);
CREATE TABLE IF NOT EXISTS passages (
    rowid INTEGER PRIMARY KEY,
    record_rowid INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    UNIQUE (record_rowid, ordinal)
);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
    title, text, content = '', tokenize = '{TOKENIZER}'
);
"""


# SQLite virtual-machine steps between two calls of the progress handler (a few per millisecond).
_PROGRESS_STEPS = 20_000
_FTS5 = re.compile(r"^CREATE\s+VIRTUAL\s+TABLE\s+\S+\s+USING\s+fts5\s*\(", re.I)
_CONTENTLESS = re.compile(r"\bcontent\s*=\s*(''|\"\")", re.I)


def _expected_schema() -> dict[str, tuple[str, set[str]]]:
    """What :data:`_SCHEMA` creates: object name -> (kind, column names), read back from SQLite itself."""
    reference = sqlite3.connect(":memory:")
    try:
        reference.executescript(_SCHEMA)
        rows = reference.execute("SELECT type, name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        return {name: ("fts5" if _FTS5.match(sql or "") else "table",
                       {row[1] for row in reference.execute(f'PRAGMA table_info("{name}")')})
                for _kind, name, sql in rows if not name.startswith("passages_fts_")}
    finally:
        reference.close()


_EXPECTED = _expected_schema()


def check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a database whose schema is not the one Quire writes (it may come from anyone's pack).

    Before any of its data is read: every table Quire queries must be a plain table with the
    expected columns (the text index an FTS5 table), and there may be no views or triggers, which
    would run the pack author's SQL (a recursive view never ends) whenever Quire reads or writes.
    An empty database (a datastore being created) passes; its schema is written next.
    """
    objects = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
    if not objects:
        return
    problems: list[str] = []
    found: dict[str, str] = {}
    sql_of = {name: sql or "" for _kind, name, sql in objects}
    for kind, name, sql in objects:
        if kind in ("view", "trigger"):
            problems.append(f"it defines a {kind} {name!r}")
        elif kind == "table":
            found[name] = "fts5" if _FTS5.match(sql or "") else "virtual" if (sql or "").upper().startswith(
                "CREATE VIRTUAL") else "table"
    for name, (kind, columns) in _EXPECTED.items():
        if name not in found:
            continue  # an older or partial database: _ensure_schema adds it, or reading it fails cleanly
        if found[name] != kind:
            problems.append(f"{name!r} is not a plain {'FTS5 index' if kind == 'fts5' else 'table'}")
        elif kind == "fts5" and not _CONTENTLESS.search(sql_of[name]):
            # An index reading its text from another table would read whatever that table holds.
            problems.append(f"{name!r} is not a contentless FTS5 index")
        else:
            have = {row[1] for row in conn.execute(f'PRAGMA table_info("{name}")')}
            if not columns <= have:
                problems.append(f"table {name!r} lacks {', '.join(sorted(columns - have))}")
    if problems:
        raise StoreError(f"The datastore database {path} is not one Quire wrote ({'; '.join(problems)}); it was not "
                         "read. Remove it, or install a pack made by `quire datastore pack`.")


@dataclass(frozen=True)
class StoredPassage:
    """A passage as written: its record's id and title, its place in the record, its text and hash."""

    record_id: str
    ordinal: int
    title: str
    text: str
    content_hash: str


@dataclass(frozen=True)
class ImportState:
    """Where an import of one file stands (``lines_done`` lines are committed)."""

    id: int
    path: str
    lines_done: int
    finished: bool
    ended_early: str
    problem_count: int


class DatastoreStore:
    """Thread-safe access to one datastore database; every write is one transaction."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.path = path
        if not create and not path.is_file():
            raise StoreError(f"No datastore database at {path}.")
        self._deadline: float | None = None  # see bounded()
        self._timed_out = False
        self.read_only = not create and not writable_place(path)
        try:
            # A datastore on a read-only disk is searched as it is (it cannot be upgraded or added to).
            conn = connect_read_only(path) if self.read_only else connect(path)
            # A datastore may come from a pack someone else made: its schema must not run code
            # (views, triggers, functions in defaults) on Quire's behalf.
            conn.execute("PRAGMA trusted_schema=OFF")
            conn.set_progress_handler(self._keep_going, _PROGRESS_STEPS)
            check_schema(conn, path)
            if not self.read_only:
                use_wal(conn)
                self._ensure_schema(conn)
                check_schema(conn, path)
            elif conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                raise StoreError(f"The datastore {path.parent.name} was written by another version of Quire and "
                                 "must be upgraded, which needs write access; its folder is read-only.")
        except sqlite3.DatabaseError as exc:
            if is_disk_full(exc, path.parent):
                raise StoreError(disk_full_message(f"the datastore database {path.parent.name}/{path.name}",
                                                   path.parent, OPEN_ROOM)) from None
            raise StoreError(f"The datastore database {path} cannot be opened ({exc}); remove the datastore "
                             "(`quire datastore remove NAME`) and add or install it again.") from None
        self._conn = conn
        self._lock = threading.RLock()

    def _keep_going(self) -> int:
        """SQLite's progress handler: non-zero stops the running statement (its time bound has passed).

        Being Python, it also lets Ctrl-C in: the interpreter raises KeyboardInterrupt inside it,
        which makes SQLite stop the statement too (and :meth:`_stopped` raises it again).
        """
        if self._deadline is not None and time.monotonic() > self._deadline:
            self._timed_out = True
            return 1
        return 0

    @contextmanager
    def bounded(self, seconds: float) -> Iterator[None]:
        """Stop any query that runs longer than ``seconds`` inside this block (untrusted databases)."""
        self._deadline = time.monotonic() + seconds
        try:
            yield
        finally:
            self._deadline = None

    @staticmethod
    def _ensure_schema(conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError("This datastore was written by a newer Quire; update Quire to use it.")
        if version < SCHEMA_VERSION:
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        try:
            with transaction(self._conn, self._lock) as conn:
                yield conn
        except sqlite3.OperationalError as exc:
            if not is_disk_full(exc):
                raise
            # Rolled back: an import resumes after its last committed batch once there is room.
            raise StoreError(disk_full_message(f"to the datastore database {self.path.parent.name}/"
                                               f"{self.path.name}", self.path.parent, OPEN_ROOM)) from None

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """Rows of a read-only query (used by the source, the packer and tests)."""
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.OperationalError as exc:
                self._stopped(exc)
                raise StoreError(f"The datastore database {self.path} could not be read ({exc}); remove the "
                                 "datastore and add or install it again.") from None
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"The datastore database {self.path} could not be read ({exc}); remove the "
                                 "datastore and add or install it again.") from None

    def _stopped(self, exc: sqlite3.OperationalError) -> None:
        """Turn a statement the progress handler stopped into what stopped it."""
        if "interrupted" not in str(exc):
            return
        if not self._timed_out:
            raise KeyboardInterrupt from None  # the only other reason a statement is stopped
        self._timed_out = False
        raise StoreError(f"Reading the datastore database {self.path} took too long (its data or schema is not "
                         "what Quire writes); it was stopped. Remove it, or do not install this pack.") from None

    # --- meta ------------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        return dict(self.query("SELECT key, value FROM meta"))

    def set_meta(self, **values: str) -> None:
        with self.transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(values.items()))

    def counts(self) -> dict[str, int]:
        records, words = self.query("SELECT count(*), coalesce(sum(word_count), 0) FROM records")[0]
        passages = self.query("SELECT count(*) FROM passages")[0][0]
        return {"records": int(records), "passages": int(passages), "words": int(words)}

    # --- imports ---------------------------------------------------------------------------

    def import_state(self, fingerprint: str, path: str) -> ImportState:
        """The import of the file with this fingerprint, created if new (a rerun resumes it)."""
        with self.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO imports(path, fingerprint, started_at) VALUES (?, ?, ?)",
                         (path, fingerprint, time.time()))
            row = conn.execute("SELECT id, path, lines_done, finished, ended_early, problem_count FROM imports "
                               "WHERE fingerprint = ?", (fingerprint,)).fetchone()
        return ImportState(row[0], row[1], row[2], bool(row[3]), row[4], row[5])

    def problems(self, import_id: int) -> list[LineProblem]:
        rows = self.query("SELECT line, reason FROM problems WHERE import_id = ? ORDER BY line", (import_id,))
        return [LineProblem(line, reason) for line, reason in rows]

    def existing(self, record_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Which of ``record_ids`` are stored, with the (import, line) each came from."""
        if not record_ids:
            return {}
        rows = self.query("SELECT id, import_id, line FROM records WHERE id IN (SELECT value FROM json_each(?))",
                          (json.dumps(list(record_ids)),))
        return {row[0]: (row[1], row[2]) for row in rows}

    def import_path(self, import_id: int) -> str:
        rows = self.query("SELECT path FROM imports WHERE id = ?", (import_id,))
        return rows[0][0] if rows else "?"

    def write_batch(self, import_id: int, records: Sequence[tuple[Record, list[StoredPassage]]],
                    problems: Sequence[LineProblem], lines_done: int) -> None:
        """Store records with their passages and FTS rows, and advance the import, in one transaction."""
        with self.transaction() as conn:
            for record, passages in records:
                bib = record.bib
                cursor = conn.execute(
                    "INSERT INTO records(id, title, year, url, authors, doi, arxiv_id, norm_title, origin, import_id, "
                    "line, word_count, passage_count) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (record.id, bib.title, bib.year, bib.url, json.dumps(list(bib.authors)), bib.doi, bib.arxiv_id,
                     normalize_title(bib.title), record.origin, import_id, record.line,
                     len(record.text.split()), len(passages)))
                record_rowid = cursor.lastrowid
                for passage in passages:
                    passage_rowid = conn.execute(
                        "INSERT INTO passages(record_rowid, ordinal, text, content_hash) VALUES (?,?,?,?)",
                        (record_rowid, passage.ordinal, passage.text, passage.content_hash)).lastrowid
                    # Each text's words as its language has them (engine/text/keywords.py).
                    conn.execute("INSERT INTO passages_fts(rowid, title, text) VALUES (?,?,?)",
                                 (passage_rowid, title_keywords(passage.title),
                                  keyword_text(passage.text, detect_language(passage.text))))
            stored = conn.execute("SELECT count(*) FROM problems WHERE import_id = ?", (import_id,)).fetchone()[0]
            room = max(0, MAX_STORED_PROBLEMS - stored)
            conn.executemany("INSERT INTO problems(import_id, line, reason) VALUES (?,?,?)",
                             [(import_id, p.line, p.reason) for p in problems[:room]])
            conn.execute("UPDATE imports SET lines_done = ?, problem_count = problem_count + ? WHERE id = ?",
                         (lines_done, len(problems), import_id))

    def finish_import(self, import_id: int, ended_early: str | None) -> None:
        with self.transaction() as conn:
            conn.execute("UPDATE imports SET finished = 1, ended_early = ?, finished_at = ? WHERE id = ?",
                         (ended_early or "", time.time(), import_id))

    # --- reading passages ------------------------------------------------------------------

    def passages_after(self, after_rowid: int, limit: int) -> list[tuple[int, StoredPassage]]:
        """Up to ``limit`` passages with rowid above ``after_rowid``, in rowid order (for embedding)."""
        rows = self.query(
            "SELECT p.rowid, r.id, p.ordinal, r.title, p.text, p.content_hash FROM passages p "
            "JOIN records r ON r.rowid = p.record_rowid WHERE p.rowid > ? ORDER BY p.rowid LIMIT ?",
            (after_rowid, limit))
        return [(row[0], StoredPassage(row[1], row[2], row[3], row[4], row[5])) for row in rows]

    def keyword_search(self, fts_query: str, k: int, record_ids: Sequence[str] | None = None
                       ) -> list[tuple[str, int, float]]:
        """(record id, ordinal, BM25 score) of the passages an FTS5 query matches, best first."""
        score = bm25_expression("passages_fts")
        sql = (f"SELECT r.id, p.ordinal, -{score} FROM passages_fts JOIN passages p ON p.rowid = passages_fts.rowid "
               "JOIN records r ON r.rowid = p.record_rowid WHERE passages_fts MATCH ?")
        params: list[object] = [fts_query]
        if record_ids is not None:
            sql += " AND r.id IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(record_ids)))
        sql += f" ORDER BY {score}, p.rowid LIMIT ?"
        params.append(int(k))
        return [(record_id, int(ordinal), float(value)) for record_id, ordinal, value in self.query(sql, params)]

    def passage_keys(self, rowids: Sequence[int]) -> dict[int, tuple[str, int]]:
        """Each passage rowid's (record id, ordinal)."""
        rows = self.query("SELECT p.rowid, r.id, p.ordinal FROM passages p JOIN records r ON r.rowid = "
                          "p.record_rowid WHERE p.rowid IN (SELECT value FROM json_each(?))",
                          (json.dumps(list(rowids)),))
        return {rowid: (record_id, ordinal) for rowid, record_id, ordinal in rows}

    def passage_stamp(self) -> tuple[int, int]:
        """How many passages there are and the last one's rowid: what precomputed postings must match."""
        count, last = self.query("SELECT count(*), coalesce(max(rowid), 0) FROM passages")[0]
        return int(count), int(last)

    def content_hash(self, record_id: str, ordinal: int) -> str | None:
        rows = self.query("SELECT p.content_hash FROM passages p JOIN records r ON r.rowid = p.record_rowid "
                          "WHERE r.id = ? AND p.ordinal = ?", (record_id, ordinal))
        return rows[0][0] if rows else None

    def passage_with_record(self, record_id: str, ordinal: int) -> tuple | None:
        """(record id, title, passage text, authors JSON, year, doi, arXiv id, url), or None."""
        rows = self.query("SELECT r.id, r.title, p.text, r.authors, r.year, r.doi, r.arxiv_id, r.url FROM records r "
                          "JOIN passages p ON p.record_rowid = r.rowid WHERE r.id = ? AND p.ordinal = ?",
                          (record_id, ordinal))
        return rows[0] if rows else None

    def record_by_identifier(self, column: str, value: str) -> tuple | None:
        """(title, authors JSON, year, doi) of the first record whose ``doi`` or ``arxiv_id`` is ``value``."""
        if column not in ("doi", "arxiv_id"):  # a column name cannot be a parameter
            raise ValueError(f"not an identifier column: {column!r}")
        rows = self.query(f"SELECT title, authors, year, doi FROM records WHERE {column} = ? LIMIT 1", (value,))
        return rows[0] if rows else None

    def imported_paths(self) -> tuple[str, ...]:
        return tuple(row[0] for row in self.query("SELECT path FROM imports ORDER BY id"))

    def integrity_problems(self, most: int = 5) -> list[str]:
        """SQLite's check of every page: ``["ok"]`` or up to ``most`` problems."""
        return [str(row[0]) for row in self.query(f"PRAGMA integrity_check({int(most)})")]

    @contextmanager
    def reading_connection(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection of its own, for a long read (the BM25 postings) beside searches."""
        conn = connect_read_only(self.path)
        try:
            yield conn
        finally:
            conn.close()

    def snapshot(self, dest: Path) -> None:
        """A consistent, compact single-file copy of the database (no WAL beside it), for packing."""
        with self._lock:
            try:
                self._conn.execute("VACUUM INTO ?", (str(dest),))
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"Could not copy the datastore database to {dest} ({exc}); check free disk "
                                 "space.") from None
