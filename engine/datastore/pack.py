"""Datastore packs: build one from an installed datastore, verify and install one from a file.

Building snapshots the database (``VACUUM INTO``: consistent, compact, no WAL), copies the saved
vector index, hashes both and writes ``manifest.json`` first in a gzip tar, so an installer learns
what it is getting (and which embedding model made the vectors) before reading any data. The copies
and the archive being written are hidden files beside the output, named after the packing process;
what a killed pack left there is deleted by the next pack into that folder.

Installing never calls ``tarfile.extract``: each member is streamed into a staging folder under
a name the manifest lists and that is a plain file name, while its sha256 is computed; links,
folders, unknown names and a second copy of a name are refused. Only when every file matches
the manifest and the database opens with the promised record count is the staging folder
renamed into place, so a failed install leaves nothing behind and a working datastore is only
replaced by a complete one.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import logging
import lzma
import os
import re
import shutil
import tarfile
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import engine
from engine.datastore.contents import ContentProblem, check_contents
from engine.datastore.manifest import (
    MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    Manifest,
    PackError,
    PackFile,
    PackModelMismatchError,
    is_safe_member_name,
    parse_manifest,
)
from engine.datastore.registry import DATABASE_FILE, INDEX_FILE, check_name
from engine.datastore.source import DatastoreSource
from engine.datastore.store import DatastoreStore
from engine.disk import process_running
from engine.embed import Embedder
from engine.errors import EngineError, IndexCorruptError
from engine.index.storage import load_index
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.retrieve.postings import PostingsError

log = logging.getLogger(__name__)

CHUNK = 1 << 20
PACK_SUFFIX = ".quirepack"
_CHECK_SECONDS = 30.0  # the least time the database check of a pack may take before it is stopped
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<?xml", b"<body")


def default_pack_name(name: str, version: str) -> str:
    return f"{name}-{version}{PACK_SUFFIX}"


def sha256_of(path: Path, cancel: CancelToken | None = None) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            if cancel is not None:
                cancel.check()
            digest.update(chunk)
    return digest.hexdigest()


def build_pack(source: DatastoreSource, out: Path, *, version: str | None = None,
               progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> tuple[Path, Manifest]:
    """Write a pack of ``source`` to ``out`` (a file, or a folder to put ``<name>-<version>.quirepack`` in)."""
    version = version or time.strftime("%Y.%m.%d")
    if out.is_dir():
        out = out / default_pack_name(source.name, version)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_pack_leftovers(out.parent)
    staging = out.with_name(f".{out.name}.packing-{os.getpid()}.staging")
    partial = out.with_name(f".{out.name}.packing-{os.getpid()}.part")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        progress(Progress("pack", 0, 3, "copying the database"))
        source.store.snapshot(staging / DATABASE_FILE)
        counts = source.store.counts()
        names = [DATABASE_FILE]
        model: str | None = None
        dimension: int | None = None
        embedded = 0
        with source.embedding():  # no embedding run may rewrite the index while it is copied
            header = source.index_header()
            if header is not None:
                # The header says which model built the index: no need to load the model itself.
                model, dimension, embedded = header.model_id, header.dimension, header.count
                shutil.copyfile(source.index_path, staging / INDEX_FILE)
                names.append(INDEX_FILE)
        progress(Progress("pack", 1, 3, "hashing"))
        files = tuple(PackFile(name, (staging / name).stat().st_size, sha256_of(staging / name, cancel))
                      for name in names)
        manifest = Manifest(name=source.name, version=version, record_count=counts["records"],
                            passage_count=counts["passages"], embedding_model=model, embedding_dimension=dimension,
                            embedded_count=embedded, files=files, created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                           time.gmtime()),
                            quire_version=engine.__version__)
        progress(Progress("pack", 2, 3, "writing the archive"))
        with tarfile.open(partial, "w:gz", compresslevel=6) as archive:
            raw = json.dumps(manifest.to_json(), indent=2).encode("utf-8")
            info = tarfile.TarInfo(MANIFEST_NAME)
            info.size, info.mtime, info.mode = len(raw), int(time.time()), 0o644
            archive.addfile(info, io.BytesIO(raw))
            for name in names:
                if cancel is not None:
                    cancel.check()
                archive.add(staging / name, arcname=name, recursive=False, filter=_plain_member)
        os.replace(partial, out)
        progress(Progress("pack", 3, 3, str(out)))
        return out, manifest
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        partial.unlink(missing_ok=True)  # a cancelled or failed pack leaves no half archive


# What a pack killed mid-way leaves beside its output: the hidden database and index copies and the archive
# being written, named after the packing process so a pack running now in the same folder is left alone.
# The names without a process id are those older versions of Quire wrote.
_PACK_LEFTOVER = re.compile(r"^\..+\.packing-(\d+)\.(?:part|staging)$")
_OLD_PACK_LEFTOVER = re.compile(r"^\..+\.quirepack\.(?:part|staging)$")


def remove_pack_leftovers(folder: Path) -> list[str]:
    """Delete what killed packs left in ``folder`` (their processes are gone); returns the names deleted."""
    removed: list[str] = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        match = _PACK_LEFTOVER.match(path.name)
        if match is None and not _OLD_PACK_LEFTOVER.match(path.name):
            continue
        if match is not None and process_running(int(match.group(1))):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path.name)
        log.warning("deleted %s, left in %s by an interrupted datastore pack", path.name, folder)
    return removed


def _plain_member(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = 0o644
    return info


def _sniff(path: Path) -> None:
    """Refuse with a clear message what is obviously not a pack (a web page, a JSON-lines file...)."""
    with path.open("rb") as handle:
        head = handle.read(1024)
    lowered = head.lstrip().lower()
    if lowered.startswith(_HTML_STARTS):
        raise PackError(f"{path} is a web page, not a datastore pack: the URL probably leads to a download page or "
                        "a login; use the direct link to the .quirepack file.")
    with _reading(path):
        is_tar = tarfile.is_tarfile(path)
    if not is_tar:
        raise PackError(f"{path} is not a Quire datastore pack (not a tar archive). To import JSON lines use "
                        "`quire datastore add FILE --name NAME`.")


def read_pack_manifest(pack: Path) -> Manifest:
    """The manifest of a pack file or unpacked pack folder, without reading its data."""
    _check_regular_file(pack)
    if pack.is_dir():
        path = pack / MANIFEST_NAME
        if not path.is_file():
            raise PackError(f"{pack} has no {MANIFEST_NAME}; it is not an unpacked datastore pack.")
        return parse_manifest(path.read_bytes()[:MAX_MANIFEST_BYTES], str(pack))
    _sniff(pack)
    with _reading(pack), tarfile.open(pack, "r:*") as archive:
        first = archive.next()
        return _manifest_member(archive, first, pack)


@contextmanager
def _reading(pack: Path) -> Iterator[None]:
    """Turn the ways a damaged archive fails to read (cut short, a lying size header) into one clear refusal."""
    try:
        yield
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError) as exc:
        raise PackError(f"{pack} is damaged or incomplete ({exc or type(exc).__name__}): the archive ends early or "
                        "its headers contradict its data. Download or build the pack again; nothing was "
                        "installed.") from None


def _check_regular_file(pack: Path) -> None:
    """Refuse a named pipe, a device or a socket before opening it: reading one would hang or never end."""
    if pack.exists() and not pack.is_dir() and not pack.is_file():
        raise PackError(f"{pack} is not a regular file (a named pipe, a device or a socket); give a .quirepack file "
                        "or an unpacked pack folder.")


def _manifest_member(archive: tarfile.TarFile, member: tarfile.TarInfo | None, pack: Path) -> Manifest:
    if member is None or member.name != MANIFEST_NAME or not member.isfile():
        raise PackError(f"{pack} does not start with {MANIFEST_NAME}; it is not a Quire datastore pack.")
    if member.size > MAX_MANIFEST_BYTES:
        raise PackError(f"{pack}: the manifest is implausibly large; refusing the pack.")
    handle = archive.extractfile(member)
    assert handle is not None
    return parse_manifest(handle.read(), str(pack))


def install_pack(pack: Path, root: Path, *, configured_model: Callable[[], str], reembed: bool = False,
                 replace: bool = False, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None,
                 before_replace: Callable[[str], None] | None = None) -> Manifest:
    """Verify ``pack`` and install it as ``root/<name>``; raise :class:`PackError` and install nothing if it is bad.

    A pack whose vectors come from a model other than ``configured_model()`` is refused unless
    ``reembed`` (install without its index; the passages are embedded again with the configured model).
    """
    if not pack.exists():
        raise PackError(f"{pack} does not exist.")
    manifest = read_pack_manifest(pack)
    name = check_name(manifest.name)
    if manifest.embedding_model is not None and not reembed:
        current = configured_model()
        if current != manifest.embedding_model:
            raise PackModelMismatchError(
                f"The pack {manifest.name!r} was embedded with {manifest.embedding_model}, but Quire is set to "
                f"use {current}. Set [retrieval] embedder in settings.toml to that model, or install with "
                "--reembed to drop the pack's vectors and embed its passages with your model.")
    target = root / name
    if (target / DATABASE_FILE).exists() and not replace:
        raise PackError(f"A datastore named {name!r} is already installed; remove it first "
                        f"(`quire datastore remove {name}`) or install with --replace.")
    root.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(root).free
    if free < manifest.total_bytes + (64 << 20):
        raise PackError(f"Installing {name!r} needs {manifest.total_bytes / 2**20:,.0f} MiB but only "
                        f"{free / 2**20:,.0f} MiB are free under {root}; free some space and try again.")
    _check_expansion(pack, manifest)
    staging = root / f".installing-{name}-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        if pack.is_dir():
            _copy_folder(pack, manifest, staging, progress, cancel)
        else:
            _unpack(pack, manifest, staging, progress, cancel)
        _check_database(staging, manifest, pack)
        if reembed or manifest.embedding_model is None:
            (staging / INDEX_FILE).unlink(missing_ok=True)
        _check_index(staging, manifest, pack)
        _prepare(staging, manifest, pack, progress, cancel)
        if before_replace is not None:
            before_replace(name)
        _move_into_place(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log.info("installed datastore %s %s (%d records)", name, manifest.version, manifest.record_count)
    return manifest


# gzip shrinks a real pack about 3 times (its text; vectors hardly at all): one that says it unpacks to
# far more than its own size is a compression bomb (2 GB of zeros make a 2 MB pack), refused before
# it is written out whole. Small packs of mostly empty database pages shrink further: never refused below
# the floor.
MAX_EXPANSION = 20
EXPANSION_FLOOR = 256 << 20


def _check_expansion(pack: Path, manifest: Manifest) -> None:
    size = pack.stat().st_size
    if pack.is_file() and manifest.total_bytes > max(EXPANSION_FLOOR, MAX_EXPANSION * size):
        raise PackError(f"{pack} is {size / 2**20:,.1f} MiB but says it unpacks to "
                        f"{manifest.total_bytes / 2**20:,.0f} MiB, more than {MAX_EXPANSION} times its size, which no "
                        "real pack does (it would only fill the disk); refusing it before writing anything.")


def _unpack(pack: Path, manifest: Manifest, staging: Path, progress: ProgressCallback,
            cancel: CancelToken | None) -> None:
    seen: set[str] = set()
    done = 0
    with _reading(pack), tarfile.open(pack, "r:*") as archive:
        _manifest_member(archive, archive.next(), pack)
        while (member := archive.next()) is not None:
            name = member.name
            if not is_safe_member_name(name):
                raise PackError(f"{pack}: the archive entry {name!r} is not a plain file name (it could write outside "
                                "the datastore folder); refusing the pack.")
            expected = manifest.file(name)
            if expected is None:
                raise PackError(f"{pack}: the archive holds {name!r}, which its manifest does not list; the pack was "
                                "altered, refusing it.")
            if not member.isfile():
                raise PackError(f"{pack}: the archive entry {name!r} is a link or a folder, not a file; refusing "
                                "the pack.")
            if name in seen:
                raise PackError(f"{pack}: the archive holds {name!r} twice; refusing the pack.")
            seen.add(name)
            handle = archive.extractfile(member)
            assert handle is not None
            done = _write_checked(handle, staging / name, expected, pack, done, manifest.total_bytes, progress, cancel)
    _check_all_present(manifest, seen, pack)


def _copy_folder(pack: Path, manifest: Manifest, staging: Path, progress: ProgressCallback,
                 cancel: CancelToken | None) -> None:
    done = 0
    for expected in manifest.files:
        path = pack / expected.path
        if not path.is_file() or path.is_symlink():
            raise PackError(f"{pack}: {expected.path} is missing; the pack is incomplete.")
        with path.open("rb") as handle:
            done = _write_checked(handle, staging / expected.path, expected, pack, done, manifest.total_bytes,
                                  progress, cancel)


def _write_checked(handle: IO[bytes], dest: Path, expected: PackFile, pack: Path, done: int, total: int,
                   progress: ProgressCallback, cancel: CancelToken | None) -> int:
    digest = hashlib.sha256()
    size = 0
    with dest.open("wb") as out:
        while chunk := handle.read(CHUNK):
            if cancel is not None:
                cancel.check()
            size += len(chunk)
            if size > expected.size:
                raise PackError(f"{pack}: {expected.path} is larger than its manifest says; the pack was altered, "
                                "refusing it.")
            digest.update(chunk)
            out.write(chunk)
            progress(Progress("install", done + size, total, expected.path))
        out.flush()
        os.fsync(out.fileno())
    if size != expected.size or digest.hexdigest() != expected.sha256:
        raise PackError(f"{pack}: {expected.path} does not match its sha256 in the manifest (the file is damaged or "
                        "was altered); download or build the pack again.")
    return done + size


def _check_all_present(manifest: Manifest, seen: set[str], pack: Path) -> None:
    missing = [f.path for f in manifest.files if f.path not in seen]
    if missing:
        raise PackError(f"{pack}: {', '.join(missing)} missing from the archive; the pack is incomplete.")


def _check_database(staging: Path, manifest: Manifest, pack: Path) -> None:
    database = manifest.file(DATABASE_FILE)
    if database is None:
        raise PackError(f"{pack}: the manifest lists no {DATABASE_FILE}; this is not a datastore pack.")
    try:
        store = DatastoreStore(staging / DATABASE_FILE)  # refuses a schema Quire did not write
        try:
            # A count over plain tables takes well under a second a million records; a database
            # built to make SQLite loop (or one far bigger than its manifest) is stopped instead.
            with store.bounded(_CHECK_SECONDS + manifest.record_count / 100_000):
                # The checksums only prove the file is the one the manifest names; whoever made the
                # pack may have damaged it first (and recomputed them), so SQLite checks every page.
                problems = store.integrity_problems()
                records = store.counts()["records"] if problems == ["ok"] else 0
        finally:
            store.close()
    except EngineError as exc:
        raise PackError(f"{pack}: the datastore database in the pack cannot be used ({exc}).") from None
    if problems != ["ok"]:
        raise PackError(f"{pack}: the datastore database in the pack is damaged (SQLite's integrity check: "
                        f"{'; '.join(problems)}); download or build the pack again.")
    if records != manifest.record_count:
        raise PackError(f"{pack}: the database holds {records:,} records but the manifest promises "
                        f"{manifest.record_count:,}; refusing the pack.")
    # Every value a search will read is read once now: a pack that installs can never break search.
    try:
        # The size was checked against its sha256 as it was unpacked: the file's, not the pack maker's word.
        held = check_contents(staging / DATABASE_FILE, _CHECK_SECONDS + database.size / 20e6)
    except ContentProblem as exc:
        raise PackError(f"{pack}: the datastore database in the pack cannot be searched ({exc}); it is damaged or "
                        "was altered. Download or build the pack again.") from None
    if held.passages != manifest.passage_count:
        raise PackError(f"{pack}: the database holds {held.passages:,} passages but the manifest promises "
                        f"{manifest.passage_count:,}; refusing the pack.")


def _check_index(staging: Path, manifest: Manifest, pack: Path) -> None:
    """Load the pack's vector index once: one that does not load is damage, refused at install, not at search."""
    path = staging / INDEX_FILE
    if not path.is_file():
        return
    try:
        index = load_index(path, model_id=manifest.embedding_model)
    except IndexCorruptError as exc:
        raise PackError(f"{pack}: the vector index in the pack is damaged ({exc}); download or build the pack "
                        "again, or install it with --reembed to embed its passages here.") from None
    promised = {"dimension": manifest.embedding_dimension, "vector count": manifest.embedded_count or None}
    held = {"dimension": index.dimension, "vector count": len(index)}
    wrong = [f"{what} {promised[what]:,} in the manifest, {held[what]:,} in the index" for what in promised
             if promised[what] is not None and promised[what] != held[what]]
    if wrong:
        raise PackError(f"{pack}: the pack contradicts itself ({'; '.join(wrong)}); it is damaged or was altered. "
                        "Download or build it again, or install it with --reembed to embed its passages here.")


def _prepare(staging: Path, manifest: Manifest, pack: Path, progress: ProgressCallback,
             cancel: CancelToken | None) -> None:
    """Record the pack's version and build the BM25 postings in the staging folder, before it is moved into
    place: what fails here (a search index that does not fit its passages) leaves nothing installed."""
    source = DatastoreSource(manifest.name, staging, _no_embedder)
    try:
        source.store.set_meta(version=manifest.version)
        source.build_postings(progress, cancel)
    except (EngineError, PostingsError) as exc:
        raise PackError(f"{pack}: the search index in the pack cannot be used ({exc}); download or build the pack "
                        "again.") from None
    finally:
        source.close()


def _no_embedder() -> Embedder:
    raise EngineError("no embedding model is used while a pack is installed")


def _move_into_place(staging: Path, target: Path) -> None:
    # Renames within one folder are atomic: the datastore is either the old one or the new one.
    old = target.with_name(f".replaced-{target.name}-{os.getpid()}")
    if target.exists():
        os.replace(target, old)
    os.replace(staging, target)
    shutil.rmtree(old, ignore_errors=True)
