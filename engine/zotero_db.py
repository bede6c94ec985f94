"""Reading Zotero's database while Zotero runs: a snapshot that never takes Zotero's lock, and its schema versions.

Zotero holds an exclusive lock on ``zotero.sqlite`` while it runs. Without a write-ahead log
(Zotero 7 to 9) every committed change is in the file itself, which ``immutable=1`` reads without
any lock. Zotero 10 keeps recent commits in ``zotero.sqlite-wal``, which an immutable read would
miss: then the two files are copied into a private folder and the copy is read, so the snapshot is
current and Zotero's own files are only ever read.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

# The newest schema Quire was written against: Zotero 7's (userdata 120s; compatibility 7, which Zotero 9
# still writes). Newer databases are read by column name all the same, with a notice.
KNOWN_USERDATA = 125
KNOWN_COMPATIBILITY = 7


@contextmanager
def zotero_snapshot(database: Path) -> Iterator[sqlite3.Connection]:
    """A read connection to the state of ``database`` now, taking no lock on it and writing nothing to it."""
    wal = database.with_name(database.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        with tempfile.TemporaryDirectory(prefix="quire-zotero-") as private:
            copy = Path(private) / database.name
            shutil.copyfile(database, copy)
            shutil.copyfile(wal, Path(private) / wal.name)
            # Opened writable: only so SQLite can replay the copied log into the copy.
            conn = sqlite3.connect(copy)
            try:
                conn.execute("PRAGMA query_only=ON")
                yield conn
            finally:
                conn.close()
        return
    conn = sqlite3.connect(f"file:{quote(str(database.resolve()))}?mode=ro&immutable=1", uri=True)
    try:
        yield conn
    finally:
        conn.close()


def schema_notice(conn: sqlite3.Connection) -> str:
    """'' for a schema Quire knows; otherwise a plain sentence saying it is newer and what that means."""
    try:
        versions = {str(name): int(version) for name, version in conn.execute("SELECT schema, version FROM version")
                    if isinstance(version, int) or str(version).isdigit()}
    except sqlite3.DatabaseError:
        return ""  # a database without Zotero's version table: the table checks say what is wrong
    userdata, compatibility = versions.get("userdata", 0), versions.get("compatibility", 0)
    if userdata <= KNOWN_USERDATA and compatibility <= KNOWN_COMPATIBILITY:
        return ""
    return (f"This Zotero database is newer than the versions Quire knows (its schema: userdata {userdata}, "
            f"compatibility {compatibility}; Quire knows up to userdata {KNOWN_USERDATA}, compatibility "
            f"{KNOWN_COMPATIBILITY}, Zotero 7). Quire read it by the names of the tables and columns it needs; "
            "if papers or details are missing, update Quire.")
