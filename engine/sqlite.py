"""Opening Quire's SQLite files and writing to them: one way, used by every store.

Connections run in autocommit mode (``isolation_level=None``) so that transactions are explicit,
may be shared by threads under the owner's lock, and wait up to 30 s for another writer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the database at ``path`` (created, with its folder, when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)


def use_wal(conn: sqlite3.Connection) -> None:
    """Write-ahead logging: readers never wait for the writer; NORMAL sync is durable at checkpoints."""
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")


@contextmanager
def transaction(conn: sqlite3.Connection,
                lock: AbstractContextManager[object] | None = None) -> Iterator[sqlite3.Connection]:
    """One write transaction (holding ``lock`` if given); rolled back on any error, cancellation included."""
    with lock if lock is not None else nullcontext():
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            _rollback(conn)
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error:
            _rollback(conn)
            raise


def _rollback(conn: sqlite3.Connection) -> None:
    # After a failed write (disk full, I/O error) SQLite may already have rolled back on its own,
    # and a ROLLBACK outside a transaction would raise over the error that matters.
    if conn.in_transaction:
        conn.execute("ROLLBACK")
