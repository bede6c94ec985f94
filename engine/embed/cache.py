"""Embeddings cached by (model id, passage content hash) in their own SQLite file.

The catalog knows passages; this file only knows vectors, so it can be deleted at any time
(everything is re-embedded) and shared by the library and its datastores. This module is the
only code that opens it.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from engine.disk import OPEN_ROOM, disk_full_message, is_disk_full
from engine.errors import StoreError
from engine.sqlite import connect, connect_read_only, transaction, use_wal, writable_place

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
# SQLite's default limit on bound parameters is 32766 on modern builds but 999 on old ones.
_CHUNK = 900

# Hand-written, not sqlite-utils: it cannot make a WITHOUT ROWID table (which keeps no second copy of the key).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_id, content_hash)
) WITHOUT ROWID;
"""


class EmbeddingCache:
    """Thread-safe get/put of float32 vectors; a vector is written once and never changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.read_only = False
        self._lock = threading.RLock()
        if not writable_place(path):
            # A library on a read-only disk: search with the vectors it has; new ones are not kept.
            self._conn = self._open_read_only(path)
            self.read_only = True
            return
        try:
            conn = connect(path)
            use_wal(conn)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(f"The embedding cache {path} was written by a newer Quire; update Quire or delete "
                                 "the file (it only holds vectors, which will be recomputed).")
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            if is_disk_full(exc, path.parent):  # not damage: deleting the cache would only throw away computed vectors
                raise StoreError(disk_full_message(f"the embedding cache {path.name}", path.parent,
                                                   OPEN_ROOM)) from None
            raise StoreError(f"The embedding cache {path} cannot be opened ({exc}); delete it and the vectors "
                             "will be recomputed.") from None
        self._conn = conn

    @staticmethod
    def _open_read_only(path: Path) -> sqlite3.Connection:
        try:
            if path.is_file() and not os.access(path, os.R_OK):
                # Not a read-only disk: a file this user may not read (mode 000). The cache is only a
                # cache, so search goes on without it (keyword search and the saved index still work).
                log.warning("Quire may not read the embedding cache %s (permission denied), so searches go on "
                            "without its vectors and new ones are not kept; give your user read and write access "
                            "to it (chmod u+rw).", path)
            elif path.is_file():
                return connect_read_only(path)
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            conn.executescript(_SCHEMA)  # no cache there yet: every vector is a miss
            return conn
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"The embedding cache {path} cannot be read ({exc}), and its folder is read-only. "
                             "Make the folder writable so Quire can rebuild it.") from None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def get_many(self, model_id: str, content_hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``content_hashes``; misses are simply absent."""
        wanted = list(dict.fromkeys(content_hashes))
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start:start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT content_hash, dimension, vector FROM embeddings WHERE model_id = ? "
                    f"AND content_hash IN ({marks})", (model_id, *chunk))
                for content_hash, dimension, blob in rows:
                    vector = _decode(blob, dimension)
                    if vector is not None:
                        found[content_hash] = vector
        return found

    def put_many(self, model_id: str, content_hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Store one row of ``vectors`` per content hash, in one transaction."""
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(content_hashes):
            raise ValueError(f"{len(content_hashes)} hashes but vectors of shape {matrix.shape}")
        dimension = matrix.shape[1]
        if self.read_only:
            return  # a cache: what cannot be kept is recomputed when needed
        rows = [(model_id, content_hash, dimension, matrix[row].tobytes())
                for row, content_hash in enumerate(content_hashes)]
        try:
            with transaction(self._conn, self._lock) as conn:
                conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)
        except sqlite3.Error as exc:
            if is_disk_full(exc):
                # The vectors, their keys and the log's copy of the pages they land in.
                raise StoreError(disk_full_message(f"{len(rows):,} vectors to the embedding cache {self.path.name}",
                                                   self.path.parent, 3 * matrix.nbytes + OPEN_ROOM)) from None
            raise StoreError(f"Could not write to the embedding cache {self.path} ({exc}); check free disk "
                             "space.") from None

    def count(self, model_id: str | None = None) -> int:
        """How many vectors are cached, for one model or for all."""
        with self._lock:
            if model_id is None:
                return int(self._conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])
            return int(self._conn.execute("SELECT count(*) FROM embeddings WHERE model_id = ?",
                                          (model_id,)).fetchone()[0])

    def count_among(self, model_id: str, content_hashes: Iterable[str]) -> int:
        """How many of ``content_hashes`` have a vector of ``model_id`` here (counted, never read)."""
        wanted = list(dict.fromkeys(content_hashes))
        found = 0
        with self._lock:
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start:start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                found += int(self._conn.execute(f"SELECT count(*) FROM embeddings WHERE model_id = ? AND "
                                                f"content_hash IN ({marks})", (model_id, *chunk)).fetchone()[0])
        return found

    def model_ids(self) -> list[str]:
        with self._lock:
            return [row[0] for row in self._conn.execute("SELECT DISTINCT model_id FROM embeddings ORDER BY 1")]

    def iter_model(self, model_id: str, batch_size: int = 4096) -> Iterator[tuple[list[str], np.ndarray]]:
        """Every cached (content hashes, vectors) of a model in batches, without loading all at once."""
        last = ""
        while True:
            with self._lock:
                rows = self._conn.execute(
                    "SELECT content_hash, dimension, vector FROM embeddings WHERE model_id = ? AND content_hash > ? "
                    "ORDER BY content_hash LIMIT ?", (model_id, last, batch_size)).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            decoded = [(content_hash, _decode(blob, dimension)) for content_hash, dimension, blob in rows]
            kept = [(h, v) for h, v in decoded if v is not None]
            if kept:
                yield [h for h, _ in kept], np.stack([v for _, v in kept])

    def drop_model(self, model_id: str) -> int:
        """Forget a model's vectors (after the user switched models for good); returns how many."""
        with self._lock:
            cursor = self._conn.execute("DELETE FROM embeddings WHERE model_id = ?", (model_id,))
            return cursor.rowcount


def _decode(blob: bytes, dimension: int) -> np.ndarray | None:
    # A row whose blob does not match its dimension is damage: treat it as a miss so it gets
    # re-embedded and overwritten, rather than letting a wrong-sized vector reach an index.
    if len(blob) != 4 * dimension:
        return None
    return np.frombuffer(blob, dtype=np.float32)
