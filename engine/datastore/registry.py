"""Where datastores live: ``<home>/datastores/<name>/``, one folder per datastore.

The registry names, opens, creates and removes datastores; it keeps each opened datastore (and
its source) open until :meth:`DatastoreRegistry.close`, so searches reuse connections and indexes.
"""

from __future__ import annotations

import logging
import re
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from engine.datastore.files import DATABASE_FILE, INDEX_FILE
from engine.datastore.leftovers import recover_interrupted_installs
from engine.datastore.lock import datastore_lock
from engine.datastore.server.servers import ServerList
from engine.errors import EngineError

if TYPE_CHECKING:
    from engine.datastore.server.source import ServerDatastoreSource
    from engine.datastore.source import DatastoreSource
    from engine.embed.base import Embedder

log = logging.getLogger(__name__)

# The file names are engine.datastore.files's; these two are named here too for the packer.
__all__ = ["DATABASE_FILE", "INDEX_FILE", "DatastoreNotFoundError", "DatastoreRegistry", "check_name"]
# Names become folder names and parts of passage ids: keep them portable and unambiguous.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class DatastoreNotFoundError(EngineError):
    """No datastore of that name is installed."""


def check_name(name: str) -> str:
    """Return ``name`` if it can name a datastore folder, else raise a message saying what is allowed."""
    if not _NAME.match(name) or name in (".", "..") or name.lower() == "library":
        raise EngineError(f"{name!r} cannot name a datastore: use 1-64 letters, digits, '.', '_' or '-', starting "
                          "with a letter or digit (and not 'library').")
    return name


class DatastoreRegistry:
    """The datastores of one home folder."""

    def __init__(self, root: Path, embedder: Callable[[], Embedder]) -> None:
        self.root = root
        self._embedder = embedder
        self._sources: dict[str, DatastoreSource] = {}
        self._servers: dict[str, ServerDatastoreSource] = {}
        self.servers = ServerList(root)
        self._lock = threading.RLock()
        try:
            recover_interrupted_installs(root)
        except OSError as exc:  # a read-only folder: searching must still work, the repair waits
            log.warning("could not tidy the datastores folder %s: %s", root, exc)

    def folder(self, name: str) -> Path:
        return self.root / check_name(name)

    def names(self) -> list[str]:
        """Installed datastores (folders holding a datastore database), sorted by name."""
        if not self.root.is_dir():
            return []
        try:
            return sorted(p.name for p in self.root.iterdir()
                          if p.is_dir() and _NAME.match(p.name) and (p / DATABASE_FILE).is_file())
        except OSError as exc:
            raise EngineError(f"Quire may not read its datastores folder {self.root} ({exc.strerror}); give your "
                              "user read and write access to it (chmod u+rwx), or move it aside.") from None

    def exists(self, name: str) -> bool:
        return (self.folder(name) / DATABASE_FILE).is_file()

    def source(self, name: str) -> DatastoreSource:
        """The opened datastore ``name`` (opened once, then reused)."""
        from engine.datastore.source import DatastoreSource

        with self._lock:
            opened = self._sources.get(name)
            if opened is None:
                if not self.exists(name):
                    raise DatastoreNotFoundError(f"No datastore named {name!r}; `quire datastore list` shows the "
                                                 "installed ones.")
                opened = DatastoreSource(name, self.folder(name), self._embedder)
                self._sources[name] = opened
            return opened

    def create(self, name: str) -> DatastoreSource:
        """Open datastore ``name``, creating its folder and empty database first if it is new."""
        from engine.datastore.store import DatastoreStore

        with self._lock:
            if not self.exists(name):
                folder = self.folder(name)
                try:
                    store = DatastoreStore(folder / DATABASE_FILE, create=True)
                    try:
                        store.set_meta(name=name, created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
                    finally:
                        store.close()
                except BaseException:
                    # A datastore that could not even be created (a full disk) must not be listed as one.
                    shutil.rmtree(folder, ignore_errors=True)
                    raise
            return self.source(name)

    def server_names(self) -> list[str]:
        """Connected server datastores, sorted by name."""
        return sorted(self.servers.entries())

    def server_source(self, name: str) -> ServerDatastoreSource:
        """The server datastore ``name`` (made once; it connects at its first search)."""
        from engine.datastore.server.source import ServerDatastoreSource

        with self._lock:
            opened = self._servers.get(name)
            if opened is None:
                entry = self.servers.entries().get(name)
                if entry is None:
                    raise DatastoreNotFoundError(f"No server datastore named {name!r}; `quire datastore list` "
                                                 "shows the connected ones.")
                opened = ServerDatastoreSource(entry.name, entry.conninfo, self.servers.passfile,
                                               schema=entry.schema, statement_timeout_s=entry.statement_timeout_s)
                self._servers[name] = opened
            return opened

    def sources(self) -> list[DatastoreSource | ServerDatastoreSource]:
        """Every installed datastore, opened, then every connected server datastore (connecting when searched);
        one that cannot be opened is logged and left out."""
        opened: list[DatastoreSource | ServerDatastoreSource] = []
        try:
            names = self.names()
        except EngineError as exc:  # the library is still searched, without its datastores
            log.warning("datastores left out of search: %s", exc)
            return []
        for name in names:
            try:
                opened.append(self.source(name))
            except EngineError as exc:
                log.warning("datastore %s left out of search: %s", name, exc)
        for name in self.server_names():
            if name not in names:  # a local datastore of the same name wins (connect refuses to make one)
                opened.append(self.server_source(name))
        return opened

    def forget(self, name: str) -> None:
        """Close a datastore's connections (before it is removed or replaced on disk)."""
        with self._lock:
            opened = self._sources.pop(name, None)
            server = self._servers.pop(name, None)
        if opened is not None:
            opened.close()
        if server is not None:
            server.close()

    def remove(self, name: str) -> None:
        """Delete a datastore's folder and everything in it, or disconnect a server datastore."""
        if not self.exists(name) and name in self.servers.entries():
            self.forget(name)
            self.servers.remove(name)
            return
        if not self.exists(name):
            raise DatastoreNotFoundError(f"No datastore named {name!r}; `quire datastore list` shows the installed "
                                         "ones.")
        # The write lock: a datastore being imported, embedded or installed by another process
        # is not pulled from under it (DatastoreBusyError names who holds it).
        with datastore_lock(self.root, name, "removing it"):
            self.discard(name)

    def discard(self, name: str) -> None:
        """Delete a datastore's folder; the caller holds its write lock (an import undoing what it created)."""
        folder = self.folder(name)
        self.forget(name)
        # Rename first so a crash mid-delete never leaves a half datastore that looks installed.
        doomed = folder.with_name(f".removing-{name}")
        if doomed.exists():
            shutil.rmtree(doomed)
        folder.rename(doomed)
        shutil.rmtree(doomed, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            names = list(self._sources) + list(self._servers)
        for name in names:
            self.forget(name)
