"""Which server datastores this Quire is connected to: ``<home>/datastores/servers.json``.

Each entry holds the connection string without its password, the PostgreSQL schema and the query
time limit. Passwords go to ``<home>/datastores/servers.pgpass`` (libpq's format, mode 0600), which
libpq reads itself; neither file is ``settings.toml``.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from engine.errors import EngineError

log = logging.getLogger(__name__)

SERVERS_FILE = "servers.json"
PASSWORD_FILE = "servers.pgpass"


@dataclass(frozen=True)
class ServerEntry:
    """One connected server datastore."""

    name: str
    conninfo: str  # never holds a password
    schema: str
    statement_timeout_s: float


class ServerList:
    """The connected server datastores of one datastores folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / SERVERS_FILE
        self.passfile = root / PASSWORD_FILE

    def entries(self) -> dict[str, ServerEntry]:
        """Connected server datastores by name; an unreadable file is logged and reads as none."""
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("server datastores left out: %s cannot be read (%s)", self.path, exc)
            return {}
        found: dict[str, ServerEntry] = {}
        for item in raw.get("servers", []) if isinstance(raw, dict) else []:
            try:
                entry = ServerEntry(str(item["name"]), str(item["conninfo"]), str(item.get("schema", "quire")),
                                    float(item.get("statement_timeout_s", 5.0)))
            except (KeyError, TypeError, ValueError):
                log.warning("a server datastore entry in %s is incomplete; it is left out", self.path)
                continue
            found[entry.name] = entry
        return found

    def add(self, entry: ServerEntry) -> None:
        entries = self.entries()
        entries[entry.name] = entry
        self._write(entries)

    def remove(self, name: str) -> bool:
        entries = self.entries()
        if entries.pop(name, None) is None:
            return False
        self._write(entries)
        return True

    def _write(self, entries: dict[str, ServerEntry]) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_name(self.path.name + ".part")
            partial.write_text(json.dumps({"servers": [asdict(e) for e in entries.values()]}, indent=2),
                               encoding="utf-8")
            os.replace(partial, self.path)
        except OSError as exc:
            raise EngineError(f"Quire could not save its server datastores in {self.path} ({exc.strerror}); give "
                              "your user write access to that folder.") from None
