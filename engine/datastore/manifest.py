"""The manifest of a datastore pack: what it holds and the sha256 of every file in it.

A pack is a tar archive (gzip-compressed) whose first member is ``manifest.json``; the other
members are exactly the files the manifest lists, by plain file name. Installing checks each
file's size and sha256 against the manifest and refuses anything else in the archive.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from engine.datastore.files import DATABASE_FILE, INDEX_FILE
from engine.errors import EngineError

PACK_FORMAT = "quire-datastore-pack"
PACK_FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
MAX_MANIFEST_BYTES = 1 << 20
MAX_DIMENSION = 1 << 16  # the widest embedding models make a few thousand numbers per vector
PACK_FILES = frozenset({DATABASE_FILE, INDEX_FILE})  # what `quire datastore pack` writes
REQUIRED_FIELDS = ("format", "format_version", "name", "version", "record_count", "passage_count",
                   "embedding_model", "files")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# Pack members are plain file names: no folders, so no path can point outside the install folder.
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class PackError(EngineError):
    """A datastore pack is damaged, incomplete, unsafe or not a pack at all."""


class PackModelMismatchError(PackError):
    """The pack's vectors come from another embedding model than the one Quire is set to use."""


@dataclass(frozen=True)
class PackFile:
    """One file of a pack: its plain name, size in bytes and sha256 (hex)."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Manifest:
    """What a pack says about itself. ``embedding_model`` is None for a pack without vectors."""

    name: str
    version: str
    record_count: int
    passage_count: int
    embedding_model: str | None
    files: tuple[PackFile, ...]
    embedding_dimension: int | None = None
    embedded_count: int = 0
    created_at: str = ""
    quire_version: str = ""
    format_version: int = PACK_FORMAT_VERSION

    def to_json(self) -> dict[str, Any]:
        return {"format": PACK_FORMAT, "format_version": self.format_version, "name": self.name,
                "version": self.version, "record_count": self.record_count, "passage_count": self.passage_count,
                "embedding_model": self.embedding_model, "embedding_dimension": self.embedding_dimension,
                "embedded_count": self.embedded_count, "created_at": self.created_at,
                "quire_version": self.quire_version,
                "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files]}

    def file(self, name: str) -> PackFile | None:
        return next((f for f in self.files if f.path == name), None)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


def is_safe_member_name(name: str) -> bool:
    """A plain file name: no folder, no '..', not absolute, no drive letter or backslash."""
    return bool(_FILE_NAME.match(name)) and ".." not in name


def parse_manifest(raw: bytes, where: str) -> Manifest:
    """Validate a manifest; every problem names the field and what to do."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise PackError(f"{where}: the manifest is not valid JSON ({exc}); the pack is damaged, download or build "
                        "it again.") from None
    except RecursionError:
        # A manifest is a flat object; thousands of nested brackets are an attack on the parser's stack.
        raise PackError(f"{where}: the manifest is nested too deeply to be a Quire pack's; refusing it.") from None
    if not isinstance(data, dict):
        raise PackError(f"{where}: the manifest is not a JSON object; this is not a Quire datastore pack.")
    missing = [name for name in REQUIRED_FIELDS if name not in data]
    if missing:
        raise PackError(f"{where}: the manifest lacks {', '.join(missing)}; the pack is incomplete or was not made "
                        "by `quire datastore pack`.")
    if data["format"] != PACK_FORMAT:
        raise PackError(f"{where}: format {data['format']!r} is not a Quire datastore pack.")
    if not isinstance(data["format_version"], int) or data["format_version"] > PACK_FORMAT_VERSION:
        raise PackError(f"{where}: pack format {data['format_version']!r} is newer than this Quire reads "
                        f"({PACK_FORMAT_VERSION}); update Quire.")
    for name in ("record_count", "passage_count"):
        if not isinstance(data[name], int) or isinstance(data[name], bool) or data[name] < 0:
            raise PackError(f"{where}: manifest field {name!r} must be a non-negative integer.")
    for name in ("name", "version"):
        if not isinstance(data[name], str) or not data[name]:
            raise PackError(f"{where}: manifest field {name!r} must be a non-empty string.")
    model = data["embedding_model"]
    if model is not None and (not isinstance(model, str) or not model):
        raise PackError(f"{where}: manifest field 'embedding_model' must be a model id or null.")
    dimension = data.get("embedding_dimension")
    if dimension is not None and (_optional_int(dimension) is None or not 1 <= dimension <= MAX_DIMENSION):
        raise PackError(f"{where}: manifest field 'embedding_dimension' is {dimension!r}; an embedding model makes "
                        f"vectors of 1 to {MAX_DIMENSION:,} numbers. The pack is damaged or was altered.")
    embedded = data.get("embedded_count")
    if embedded is not None and (_optional_int(embedded) is None or embedded < 0):
        raise PackError(f"{where}: manifest field 'embedded_count' must be a non-negative integer, not {embedded!r}.")
    return Manifest(name=data["name"], version=data["version"], record_count=data["record_count"],
                    passage_count=data["passage_count"], embedding_model=model, files=_files(data["files"], where),
                    embedding_dimension=dimension, embedded_count=embedded or 0,
                    created_at=str(data.get("created_at") or ""), quire_version=str(data.get("quire_version") or ""),
                    format_version=data["format_version"])


def _files(value: Any, where: str) -> tuple[PackFile, ...]:
    if not isinstance(value, list) or not value:
        raise PackError(f"{where}: manifest field 'files' must list the pack's files.")
    files: list[PackFile] = []
    for entry in value:
        if not isinstance(entry, dict) or not {"path", "size", "sha256"} <= entry.keys():
            raise PackError(f"{where}: every entry of 'files' needs path, size and sha256.")
        path, size, digest = entry["path"], entry["size"], entry["sha256"]
        if not isinstance(path, str) or not is_safe_member_name(path) or path == MANIFEST_NAME:
            raise PackError(f"{where}: the manifest names an unsafe file {path!r} (packs hold plain file names "
                            "only); refusing the pack.")
        if path not in PACK_FILES:
            # Anything else would land in the datastore folder under a name Quire may need for
            # something else (a file `bm25` where the BM25 postings folder belongs).
            raise PackError(f"{where}: the manifest lists {path!r}, which is not a file a datastore pack holds "
                            f"(only {' and '.join(sorted(PACK_FILES))}); refusing the pack.")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise PackError(f"{where}: the size of {path} in the manifest is not a byte count.")
        if not isinstance(digest, str) or not _SHA256.match(digest.lower()):
            raise PackError(f"{where}: the sha256 of {path} in the manifest is not 64 hex digits.")
        if any(f.path == path for f in files):
            raise PackError(f"{where}: the manifest lists {path} twice.")
        files.append(PackFile(path, size, digest.lower()))
    return tuple(files)


def _optional_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
