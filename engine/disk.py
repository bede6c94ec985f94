"""Telling a full disk from other write failures, and saying so in words a user can act on.

A full disk reaches Quire as ``OSError`` with ENOSPC (no space), EDQUOT (over quota) or EFBIG (a
file size limit), or as SQLite's "database or disk is full". Each is the same advice: free space
where the file lives. It is never damage, so no message for it may suggest deleting anything of
Quire's (a cache, a library) as the fix.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import secrets
import shutil
import sqlite3
from pathlib import Path

log = logging.getLogger(__name__)

_DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_SQLITE_FULL = "database or disk is full"  # SQLite's words for SQLITE_FULL
# What opening a SQLite database in WAL mode may write before any data: its 32 KB shared-memory
# index, the first pages of its log, and the schema of a new file; 1 MB covers them with room.
OPEN_ROOM = 1 << 20


def is_disk_full(exc: BaseException, folder: Path | None = None) -> bool:
    """Whether ``exc`` says there was no room to write (no space, over quota, or over a file size limit).

    With ``folder`` (where the database lives), SQLite's bare "disk I/O error" counts too when that
    disk has less than OPEN_ROOM free: it is what SQLite reports when it cannot extend the shared-memory
    file of a database it opens, and calling it damage would send the user to delete good data.
    """
    if isinstance(exc, OSError):
        return exc.errno in _DISK_FULL_ERRNOS
    if isinstance(exc, sqlite3.DatabaseError):
        message = str(exc).lower()
        if _SQLITE_FULL in message:
            return True
        if folder is not None and "disk i/o error" in message:
            free = free_bytes(folder)
            return free is not None and free < OPEN_ROOM
    return False


def free_bytes(folder: Path) -> int | None:
    """Free bytes on the disk holding ``folder`` (or its nearest existing parent); None if unknown."""
    for place in (folder, *folder.parents):
        if place.exists():
            try:
                return shutil.disk_usage(place).free
            except OSError:
                return None
    return None


def human_bytes(count: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:,.0f} {unit}" if unit == "bytes" else f"{count:,.1f} {unit}"
        count /= 1000
    return f"{count:,.1f} GB"  # unreachable; keeps mypy sure of the return


def disk_full_message(what: str, folder: Path, needed: int | None = None) -> str:
    """"The disk is full" for ``what`` was being written under ``folder``: how much is free, how much is needed."""
    free = free_bytes(folder)
    have = f" ({human_bytes(free)} free there)" if free is not None else ""
    want = f"about {human_bytes(needed)} more" if needed else "more space"
    return (f"The disk holding {folder} is full{have}, so Quire could not write {what}. Free {want} on that disk "
            "(or raise your disk quota), then run the same command again; nothing already stored was lost.")


def write_replacing(path: Path, data: bytes, temporary: Path) -> None:
    """Write ``data`` to ``temporary``, flush it to disk, then rename it over ``path``: a crash or a full
    disk leaves the old file whole, never half a new one. On failure the temporary file is removed and
    the ``OSError`` is raised for the caller to put in its own words."""
    try:
        with temporary.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())  # a full disk can first show here, not at write()
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


def replace_whole(path: Path, data: bytes) -> None:
    """Write ``data`` over ``path`` through a temporary file beside it (see :func:`write_replacing`).

    The temporary file is named for this process and this write (``.NAME.PID.RANDOM.tmp``), so two
    writers never share one; those a killed process left behind are deleted first, as nobody else
    would ever remove them from the user's folder.
    """
    remove_dead_temporaries(path)
    write_replacing(path, data, path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"))


def remove_dead_temporaries(path: Path) -> list[Path]:
    """Delete the temporary files of ``path`` (``.NAME.PID[.RANDOM].tmp``) whose process has ended; returns them."""
    pattern = re.compile(rf"^\.{re.escape(path.name)}\.(\d+)(\.[0-9a-f]+)?\.tmp$")
    removed = []
    try:
        candidates = list(path.parent.iterdir())
    except OSError:
        return []
    for candidate in candidates:
        match = pattern.match(candidate.name)
        if match is None or process_running(int(match.group(1))) or not candidate.is_file():
            continue
        try:
            candidate.unlink()
        except OSError as exc:
            log.info("could not delete %s, left by an interrupted write: %s", candidate, exc)
            continue
        removed.append(candidate)
    return removed


def process_running(pid: int) -> bool:
    """Whether a process with this id exists (one of another user's counts as running)."""
    if pid == os.getpid():
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process, or a number no process id can be
        return False
    except OSError:  # it exists but belongs to someone else
        return True
    return True
