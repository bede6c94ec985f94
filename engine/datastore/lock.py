"""One writer per datastore: a lock file beside its folder, held while it is imported, embedded or installed.

Two `quire datastore add` into one datastore would otherwise interleave their transactions (a
duplicate-id ``IntegrityError``, or BM25 postings built from half of the other's records). The
lock is an advisory ``flock`` on ``<datastores>/.<name>.lock``: the kernel drops it when its
holder exits, however it exits, so a killed import never leaves the datastore locked. The file
says who holds it, so the second writer can tell the user, and is deleted when the lock is let go.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from engine.disk import disk_full_message, is_disk_full
from engine.errors import EngineError

log = logging.getLogger(__name__)


class DatastoreBusyError(EngineError):
    """Another Quire process is changing the same datastore right now."""


@contextlib.contextmanager
def datastore_lock(root: Path, name: str, action: str) -> Iterator[None]:
    """Hold the write lock of datastore ``name`` under ``root``, or raise :class:`DatastoreBusyError` at once."""
    if sys.platform == "win32":  # no flock; the desktop app and CLI rarely write one datastore twice there
        yield
        return
    import fcntl

    path = root / f".{name}.lock"
    while True:
        handle = _open_lock_file(path, name)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another Quire process"
            handle.close()
            raise DatastoreBusyError(
                f"The datastore {name!r} is being changed right now by {holder}; wait until it has finished, "
                "then run this again.") from None
        # The holder before us deletes the file as it lets go: a lock on a deleted file guards nothing.
        if _same_file(handle, path):
            break
        handle.close()
    try:
        _note_holder(handle, action)
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # while still held, so that no one can lock this file and believe it guards
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()


def _open_lock_file(path: Path, name: str) -> IO[str]:
    """The lock file, created with its folder if need be; a library that cannot be written says so in words."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open("a+", encoding="utf-8")
    except OSError as exc:
        if is_disk_full(exc):
            raise EngineError(disk_full_message(f"the lock file of the datastore {name!r}", path.parent)) from None
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise EngineError(f"The library {path.parent.parent} is read-only (its datastores folder cannot be "
                              f"written: {exc.strerror}), so its datastores can be searched but none can be added, "
                              "embedded, installed or removed (nothing is damaged). Make the folder writable, or copy "
                              "the library somewhere that is and use that folder with --home.") from None
        raise


def _note_holder(handle: IO[str], action: str) -> None:
    """Write who holds the lock, for a second writer's message; on a full disk, go on without it.

    The note is written unbuffered: a buffered one that did not fit would fail again when the
    handle is closed, and that error would replace the one the user needs to see.
    """
    note = f"Quire process {os.getpid()} ({action}, since {time.strftime('%H:%M:%S')})".encode()
    try:
        os.ftruncate(handle.fileno(), 0)
        os.pwrite(handle.fileno(), note, 0)
    except OSError as exc:
        log.info("could not write who holds the datastore lock (%s); the lock holds anyway", exc)


def _same_file(handle: IO[str], path: Path) -> bool:
    try:
        return os.fstat(handle.fileno()).st_ino == path.stat().st_ino
    except OSError:
        return False
