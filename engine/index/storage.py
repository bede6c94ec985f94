"""One index file: a magic line, a JSON header, then the FAISS bytes and the id table.

The header records the model that built the vectors, their dimension, the count and a
blake2b checksum of everything after it, so a truncated, damaged or foreign file is caught
on load (``IndexCorruptError``) instead of crashing a search. Saving writes a temporary file
beside the target, fsyncs it and renames it over the old one: a crash or a full disk mid-save
leaves the previous index intact.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from engine.errors import IndexCorruptError, StoreError
from engine.index.faiss_index import INDEX_KINDS, FaissIndex, FlatIndex, IVFIndex
from engine.index.ids import IdTable

MAGIC = b"QUIRE-VECTOR-INDEX\n"
FORMAT_VERSION = 1
_LENGTH = struct.Struct("<I")
_REBUILD = "it will be rebuilt from the stored embeddings"


@dataclass(frozen=True)
class IndexHeader:
    """What an index file says about itself."""

    kind: str
    model_id: str
    dimension: int
    count: int
    checksum: str
    sections: dict[str, int]
    params: dict[str, Any] = field(default_factory=dict)
    format: int = FORMAT_VERSION
    saved_at: float = 0.0

    def to_json(self) -> bytes:
        return json.dumps(self.__dict__, sort_keys=True).encode("utf-8")


def save_index(index: FaissIndex, path: Path) -> IndexHeader:
    """Write ``index`` to ``path`` atomically (temp file, fsync, rename) and return its header."""
    sections, count, params = index.snapshot()
    digest = hashlib.blake2b(digest_size=16)
    for data in sections.values():
        digest.update(data)
    header = IndexHeader(kind=index.kind, model_id=index.model_id, dimension=index.dimension, count=count,
                         checksum=digest.hexdigest(), sections={name: len(data) for name, data in sections.items()},
                         params=params, saved_at=time.time())
    encoded = header.to_json()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("wb") as handle:
            handle.write(MAGIC)
            handle.write(_LENGTH.pack(len(encoded)))
            handle.write(encoded)
            for data in sections.values():
                handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise StoreError(f"Could not save the search index to {path} ({exc}); check free disk space. The previous "
                         "index file was left as it was.") from None
    _fsync_directory(path.parent)
    return header


def _fsync_directory(folder: Path) -> None:
    # Makes the rename itself durable on POSIX; Windows cannot open directories and needs none.
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _read_header(handle: Any, path: Path) -> tuple[IndexHeader, int]:
    if handle.read(len(MAGIC)) != MAGIC:
        raise IndexCorruptError(f"{path} is not a Quire index file (or its start is damaged); {_REBUILD}.")
    raw_length = handle.read(_LENGTH.size)
    if len(raw_length) != _LENGTH.size:
        raise IndexCorruptError(f"The index file {path} is truncated; {_REBUILD}.")
    (length,) = _LENGTH.unpack(raw_length)
    raw = handle.read(length)
    try:
        data = json.loads(raw.decode("utf-8"))
        header = IndexHeader(**data)
    except (UnicodeDecodeError, ValueError, TypeError) as exc:
        raise IndexCorruptError(f"The header of the index file {path} is damaged ({exc}); {_REBUILD}.") from None
    if header.format != FORMAT_VERSION:
        raise IndexCorruptError(f"The index file {path} has format {header.format}, this Quire reads "
                                f"{FORMAT_VERSION}; {_REBUILD}.")
    return header, len(MAGIC) + _LENGTH.size + length


def read_header(path: Path) -> IndexHeader:
    """Only the header: cheap, for deciding whether an index fits the current model."""
    try:
        with path.open("rb") as handle:
            return _read_header(handle, path)[0]
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise IndexCorruptError(f"The index file {path} cannot be read ({exc}); {_REBUILD}.") from None


def load_index(path: Path, model_id: str | None = None, dimension: int | None = None) -> FaissIndex:
    """Load and verify an index; ``IndexCorruptError`` if it is damaged or was built for another model.

    ``FileNotFoundError`` passes through: a missing index is not damage, just not built yet.
    """
    try:
        with path.open("rb") as handle:
            header, offset = _read_header(handle, path)
            expected_size = offset + sum(header.sections.values())
            actual_size = os.fstat(handle.fileno()).st_size
            if actual_size != expected_size:
                raise IndexCorruptError(f"The index file {path} is {actual_size} bytes, its header says "
                                        f"{expected_size}: it is truncated or damaged; {_REBUILD}.")
            sections = {name: handle.read(size) for name, size in header.sections.items()}
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise IndexCorruptError(f"The index file {path} cannot be read ({exc}); {_REBUILD}.") from None
    if model_id is not None and header.model_id != model_id:
        raise IndexCorruptError(f"The index {path} was built with the embedding model {header.model_id}, but the "
                                f"current model is {model_id}; {_REBUILD}.")
    if dimension is not None and header.dimension != dimension:
        raise IndexCorruptError(f"The index {path} holds {header.dimension}-d vectors, the current model makes "
                                f"{dimension}-d ones; {_REBUILD}.")
    digest = hashlib.blake2b(digest_size=16)
    for data in sections.values():
        digest.update(data)
    if digest.hexdigest() != header.checksum or set(sections) != {"faiss", "keys", "names"}:
        raise IndexCorruptError(f"The index file {path} fails its checksum (damaged on disk); {_REBUILD}.")
    return _restore(header, sections, path)


def _restore(header: IndexHeader, sections: dict[str, bytes], path: Path) -> FaissIndex:
    try:
        faiss_index = faiss.deserialize_index(np.frombuffer(sections["faiss"], dtype=np.uint8))
        keys = np.frombuffer(sections["keys"], dtype="<i8").astype(np.int64)
        ids = IdTable.from_arrays(keys, sections["names"])
    except Exception as exc:  # FAISS reports a bad header as anything, even MemoryError (std::bad_alloc)
        raise IndexCorruptError(f"The index file {path} cannot be decoded ({type(exc).__name__}: {exc}); "
                                f"{_REBUILD}.") from None
    if not (faiss_index.ntotal == header.count == len(ids)) or faiss_index.d != header.dimension:
        raise IndexCorruptError(f"The index file {path} disagrees with its header (count {faiss_index.ntotal} vs "
                                f"{header.count}, {len(ids)} ids; dimension {faiss_index.d} vs {header.dimension}); "
                                f"{_REBUILD}.")
    if header.kind not in INDEX_KINDS:
        raise IndexCorruptError(f"The index file {path} is of unknown kind {header.kind!r}; {_REBUILD}.")
    if header.kind == IVFIndex.kind:
        return IVFIndex(header.model_id, header.dimension, faiss_index=faiss_index, ids=ids,
                        nprobe=header.params.get("nprobe"))
    return FlatIndex(header.model_id, header.dimension, faiss_index=faiss_index, ids=ids)
