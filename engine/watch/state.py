"""What the watcher remembers between runs: the watched folders and the papers whose files are gone.

Kept in a small SQLite file of its own beside the catalog (``watch.db``), as the datastores and the
embedding cache keep theirs: the catalog itself stays what ingest wrote. Nothing here holds the work
still to do: the folders on disk are the queue, so a run killed midway resumes from what is there.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from engine.sqlite import connect, transaction, use_wal

_SCHEMA = """
CREATE TABLE IF NOT EXISTS folders (
    path TEXT PRIMARY KEY,
    added_at REAL NOT NULL,
    unavailable TEXT NOT NULL DEFAULT '',  -- why it could not be read at the last look ('' when it could)
    device INTEGER NOT NULL DEFAULT 0  -- the disk it was on when added (st_dev): another one is an unmounted disk
);
CREATE TABLE IF NOT EXISTS missing (
    path TEXT PRIMARY KEY,  -- the file that went away, or the Zotero item now in Zotero's trash
    doc_id TEXT NOT NULL,
    since REAL NOT NULL,
    kind TEXT NOT NULL DEFAULT 'file'  -- 'file' or 'zotero trash'
);
"""


@dataclass(frozen=True)
class WatchedFolder:
    """A folder Quire keeps the library in step with."""

    path: str
    added_at: float
    unavailable: str = ""  # why it cannot be read now ('' while it can)
    device: int = 0  # the disk (st_dev) it was on when added


FILE = "file"
ZOTERO_TRASH = "zotero trash"


@dataclass(frozen=True)
class MissingFile:
    """A watched PDF that was deleted (or moved out of every watched folder), or a Zotero item moved to Zotero's
    trash: its paper is kept, marked missing, until pruned."""

    path: str  # the file, or the Zotero item ("<zotero.sqlite>#<library>/<key>")
    doc_id: str
    since: float
    kind: str = FILE

    def describe(self) -> str:
        return "moved to Zotero's trash" if self.kind == ZOTERO_TRASH else f"its file {self.path} is gone"


class WatchState:
    """The watch file of one library; every call is atomic and thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = connect(path)
        use_wal(self._conn)
        self._conn.executescript(_SCHEMA)
        self._lock = threading.RLock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def folders(self) -> list[WatchedFolder]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT path, added_at, unavailable, device FROM folders ORDER BY path").fetchall()
        return [WatchedFolder(*row) for row in rows]

    def add_folder(self, path: str, device: int) -> WatchedFolder:
        with transaction(self._conn, self._lock) as conn:
            conn.execute("INSERT OR IGNORE INTO folders(path, added_at, device) VALUES (?, ?, ?)",
                         (path, time.time(), device))
        return next(folder for folder in self.folders() if folder.path == path)

    def remove_folder(self, path: str) -> bool:
        """Stop watching ``path`` (its papers stay in the library); whether it was watched."""
        prefix = path.rstrip("/") + "/"
        with transaction(self._conn, self._lock) as conn:
            removed = conn.execute("DELETE FROM folders WHERE path=?", (path,)).rowcount
            # A missing file of a folder no longer watched is no longer Quire's to report.
            conn.execute("DELETE FROM missing WHERE substr(path, 1, ?) = ?", (len(prefix), prefix))
        return bool(removed)

    def set_unavailable(self, path: str, reason: str) -> bool:
        """Record why a folder cannot be read ('' once it can); whether that is news (to report once)."""
        with transaction(self._conn, self._lock) as conn:
            row = conn.execute("SELECT unavailable FROM folders WHERE path=?", (path,)).fetchone()
            if row is None or row[0] == reason:
                return False
            conn.execute("UPDATE folders SET unavailable=? WHERE path=?", (reason, path))
        return True

    def missing(self) -> list[MissingFile]:
        with self._lock:
            rows = self._conn.execute("SELECT path, doc_id, since, kind FROM missing ORDER BY path").fetchall()
        return [MissingFile(*row) for row in rows]

    def mark_missing(self, path: str, doc_id: str) -> bool:
        """Remember that ``path`` (holding ``doc_id``) is gone; whether it is newly so."""
        with transaction(self._conn, self._lock) as conn:
            cursor = conn.execute("INSERT OR IGNORE INTO missing(path, doc_id, since) VALUES (?,?,?)",
                                  (path, doc_id, time.time()))
        return cursor.rowcount > 0

    def set_zotero_trashed(self, database: str, trashed: list[tuple[str, str]]) -> list[str]:
        """The (item, paper) pairs of one Zotero database that are in its trash now; items restored in Zotero are
        forgotten. Returns the items newly trashed."""
        prefix = database + "#"
        with transaction(self._conn, self._lock) as conn:
            before = {row[0] for row in conn.execute("SELECT path FROM missing WHERE kind=? AND substr(path, 1, ?) = ?",
                                                     (ZOTERO_TRASH, len(prefix), prefix))}
            now = dict(trashed)
            conn.executemany("DELETE FROM missing WHERE path=?", [(item,) for item in before - set(now)])
            conn.executemany("INSERT OR IGNORE INTO missing(path, doc_id, since, kind) VALUES (?,?,?,?)",
                             [(item, doc_id, time.time(), ZOTERO_TRASH) for item, doc_id in now.items()])
        return sorted(set(now) - before)

    def forget_missing(self, paths: list[str]) -> None:
        """The files are back (or their papers were pruned)."""
        with transaction(self._conn, self._lock) as conn:
            conn.executemany("DELETE FROM missing WHERE path=?", [(path,) for path in paths])


def open_state(home: Path) -> WatchState:
    """The watch file of the library in ``home``."""
    try:
        return WatchState(home / "watch.db")
    except sqlite3.DatabaseError as exc:
        from engine.errors import StoreError

        raise StoreError(f"The watched-folder list {home / 'watch.db'} cannot be opened ({exc}); move it aside "
                         "to start the list again (the library itself is not affected).") from None
