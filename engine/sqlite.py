"""Opening Quire's SQLite files and writing to them: one way, used by every store.

Connections run in autocommit mode (``isolation_level=None``) so that transactions are explicit,
may be shared by threads under the owner's lock, and wait up to 30 s for another writer.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

from engine.disk import disk_full_message, is_disk_full
from engine.errors import StoreError


class DiskFullError(StoreError, sqlite3.OperationalError):
    """A write transaction found no room on the disk; it was rolled back whole, and nothing else was lost.

    Also an ``sqlite3.OperationalError``, so that code stopping a batch on any failed write (an
    ingest) stops on this one too, while the message says what to do in the user's words.
    """


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the database at ``path`` (created, with its folder, when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that never writes, to a database on a read-only disk or in a read-only folder.

    ``mode=ro`` reads a WAL database whose ``-wal`` and ``-shm`` files exist. Without them (a database
    closed cleanly) SQLite cannot create its shared-memory index there, and ``immutable=1`` reads the
    file as it stands: safe exactly then, as no write-ahead log holds newer pages.
    """
    uri = path.resolve().as_uri()
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=False, timeout=30)
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise
    conn = sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None, check_same_thread=False)
    conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    return conn


def writable_place(path: Path) -> bool:
    """Whether ``path`` (a file, or the folder it would be made in) can be written: a read-only mount
    says no even to root, whose permission bits say yes to everything."""
    return all(os.access(where, os.W_OK) for where in (path, path.parent) if where.exists())


def use_wal(conn: sqlite3.Connection) -> None:
    """Write-ahead logging: readers never wait for the writer; NORMAL sync is durable at checkpoints."""
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")


@contextmanager
def transaction(conn: sqlite3.Connection,
                lock: AbstractContextManager[object] | None = None) -> Iterator[sqlite3.Connection]:
    """One write transaction (holding ``lock`` if given); rolled back on any error, cancellation included."""
    with lock if lock is not None else nullcontext():
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            _raise_if_disk_full(conn, exc)
            raise
        try:
            yield conn
        except sqlite3.Error as exc:
            _rollback(conn)
            _raise_if_disk_full(conn, exc)
            raise
        except BaseException:
            _rollback(conn)
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback(conn)
            _raise_if_disk_full(conn, exc)
            raise


def _raise_if_disk_full(conn: sqlite3.Connection, exc: sqlite3.Error) -> None:
    """Raise :class:`DiskFullError` naming the database and its disk when ``exc`` says there was no room."""
    if isinstance(exc, DiskFullError):
        return
    try:
        rows = conn.execute("PRAGMA database_list").fetchall()
        path = Path(next(row[2] for row in rows if row[1] == "main"))
    except (sqlite3.Error, StopIteration):
        path = Path()
    folder = path.parent if path.name else Path.cwd()
    if is_disk_full(exc, folder):
        raise DiskFullError(disk_full_message(f"the changes to {path.name or 'its database'} (they were not "
                                              "saved)", folder)) from None


def _rollback(conn: sqlite3.Connection) -> None:
    # After a failed write (disk full, I/O error) SQLite may already have rolled back on its own,
    # and a ROLLBACK outside a transaction would raise over the error that matters.
    if conn.in_transaction:
        conn.execute("ROLLBACK")
