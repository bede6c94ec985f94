"""What the Engine does with datastores: add (import + embed), describe, pack, install, remove.

Each function is one user action over a :class:`~engine.datastore.registry.DatastoreRegistry`;
the Engine facade only forwards to them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from engine.datastore.contents import ContentProblem, check_contents
from engine.datastore.files import CACHE_FILE, DATABASE_FILE
from engine.datastore.importer import ImportReport, import_jsonl
from engine.datastore.lock import datastore_lock
from engine.datastore.manifest import Manifest, PackError
from engine.datastore.pack import build_pack, install_pack, read_pack_manifest, sha256_of
from engine.datastore.reader import DatastoreInputError, JsonLinesReader
from engine.datastore.registry import DatastoreRegistry, check_name
from engine.datastore.source import DatastoreSource
from engine.datastore.store import DatastoreStore
from engine.errors import EngineError
from engine.progress import CancelToken, ProgressCallback, no_progress

log = logging.getLogger(__name__)

_URL = re.compile(r"^https?://", re.I)


@dataclass(frozen=True)
class DatastoreInfo:
    """An installed datastore at a glance."""

    name: str
    records: int
    passages: int
    words: int
    embedded: int
    embedding_model: str | None
    size_bytes: int
    version: str
    created_at: str
    imported_from: tuple[str, ...]
    # Server datastores only: where it is (user@host/database, no password) and whether it answers now.
    location: str = ""
    state: str = ""

    @property
    def on_server(self) -> bool:
        return bool(self.location)

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["imported_from"] = list(self.imported_from)
        return data


def add_datastore(registry: DatastoreRegistry, path: Path, name: str, *, passage_words: int = 250,
                  embed: bool = True, progress: ProgressCallback = no_progress,
                  cancel: CancelToken | None = None) -> ImportReport:
    """Import ``path`` into datastore ``name`` (created if new; a rerun resumes), then embed it unless told not to."""
    check_name(name)
    JsonLinesReader(path)  # a missing file fails here, before an empty datastore is created
    with datastore_lock(registry.root, name, f"importing {path.name}"):
        return _add_locked(registry, path, name, passage_words, embed, progress, cancel)


def _add_locked(registry: DatastoreRegistry, path: Path, name: str, passage_words: int, embed: bool,
                progress: ProgressCallback, cancel: CancelToken | None) -> ImportReport:
    created = not registry.exists(name)
    source = registry.create(name)
    source.forget_postings()  # they describe the passages before this import
    try:
        report = import_jsonl(source.store, name, path, passage_words=passage_words, progress=progress,
                              cancel=cancel)
    except BaseException:
        if created and source.store.counts()["records"] == 0:
            registry.discard(name)
        raise
    if source.store.counts()["records"] == 0:
        registry.discard(name)
        first = "; ".join(str(p) for p in report.problems[:3]) or report.ended_early or "the file is empty"
        raise DatastoreInputError(f"{path} holds no usable records ({report.problem_count:,} bad lines: {first}). "
                                  "A datastore file has one JSON object per line with at least 'id' and 'text'.")
    source.build_postings(progress, cancel)
    if embed:
        source.embed_pending(progress, cancel)
    return report


def embed_datastore(registry: DatastoreRegistry, name: str, progress: ProgressCallback = no_progress,
                    cancel: CancelToken | None = None) -> int:
    """Embed what datastore ``name`` has not embedded yet (resumes a cancelled run).

    Also builds its BM25 postings if missing (a datastore from an older Quire, or a cancelled build).
    """
    source = registry.source(name)
    with datastore_lock(registry.root, name, "embedding"):
        source.build_postings(progress, cancel)
        return source.embed_pending(progress, cancel)


def datastore_info(registry: DatastoreRegistry, name: str) -> DatastoreInfo:
    source = registry.source(name)
    counts = source.store.counts()
    meta = source.store.meta()
    header = source.index_header()  # not the index itself: listing must not load a model
    model, embedded = (header.model_id, header.count) if header is not None else (None, 0)
    model, embedded = _counting_the_cache(source, model, embedded, counts["passages"])
    size = sum(p.stat().st_size for p in source.folder.rglob("*") if p.is_file())
    imported = source.store.imported_paths()
    return DatastoreInfo(name=name, records=counts["records"], passages=counts["passages"], words=counts["words"],
                         embedded=embedded, embedding_model=model, size_bytes=size, version=meta.get("version", ""),
                         created_at=meta.get("created_at", ""), imported_from=imported)


def _counting_the_cache(source: DatastoreSource, model: str | None, indexed: int,
                       passages: int) -> tuple[str | None, int]:
    """The embedding model and how many passages have a vector kept, in the index or only in the cache.

    The index is saved every half minute and at the end, but each step's vectors are in the cache as
    soon as they are computed: a run killed before its first save has no index yet, and the next run
    puts the cached vectors back in without computing them again. So the cache is what was embedded.
    """
    if not (source.folder / CACHE_FILE).is_file():
        return model, indexed
    cache = source.cache
    if model is None:
        held = {name: cache.count(name) for name in cache.model_ids()}
        model = max(held, key=lambda name: held[name]) if held else None
    if model is None:
        return None, indexed
    return model, max(indexed, min(passages, cache.count(model)))


def datastore_infos(registry: DatastoreRegistry) -> list[DatastoreInfo]:
    return [datastore_info(registry, name) for name in registry.names()]


def datastore_problems(root: Path, seconds_each: float = 30.0) -> list[str]:
    """What would make a search leave a datastore under ``root`` out: it does not open, or a value in it cannot
    be searched (each read bounded by ``seconds_each`` plus a second per 20 MB)."""
    if not root.is_dir():
        return []
    try:
        databases = sorted(folder / DATABASE_FILE for folder in root.iterdir()
                           if not folder.name.startswith(".") and (folder / DATABASE_FILE).is_file())
    except OSError as exc:
        return [f"the datastores folder {root} cannot be read ({exc.strerror}); searches leave every datastore out."]
    problems = []
    for database in databases:
        name = database.parent.name
        try:
            DatastoreStore(database).close()  # the schema check every search makes first
            check_contents(database, seconds_each + database.stat().st_size / 20e6)
        except (EngineError, ContentProblem, OSError) as exc:
            problems.append(f"datastore {name!r} cannot be searched ({exc}); searches leave it out. Remove it "
                            f"(`quire datastore remove {name}`) and install it again from a good pack.")
    return problems


def pack_datastore(registry: DatastoreRegistry, name: str, out: str | Path, *, version: str | None = None,
                   progress: ProgressCallback = no_progress,
                   cancel: CancelToken | None = None) -> tuple[Path, Manifest]:
    """Write a pack of datastore ``name`` to ``out`` (a file path, or a folder to put it in).

    ``packs/`` (ending in a separator) is a folder even before it exists: Path() drops the slash,
    and the pack would otherwise be written as a file named ``packs``.
    """
    path = Path(out).expanduser()
    if isinstance(out, str) and out.endswith(("/", os.sep)):
        try:
            path.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise PackError(f"{path} is a file, not a folder; give a folder to write the pack in, or a file name "
                            "ending in .quirepack.") from None
    return build_pack(registry.source(name), path, version=version, progress=progress, cancel=cancel)


def install_datastore(registry: DatastoreRegistry, location: str, *, configured_model: Callable[[], str],
                      reembed: bool = False, replace: bool = False, sha256: str | None = None,
                      progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> Manifest:
    """Verify and install a pack from a file, an unpacked folder or an http(s) URL (downloaded first)."""
    downloaded: Path | None = None
    if _URL.match(location):
        from engine.manager.download import download

        downloads = registry.root / ".downloads"
        file_name = re.sub(r"[^A-Za-z0-9._-]+", "_", location.rstrip("/").rsplit("/", 1)[-1].split("?")[0]) or "pack"
        try:
            downloaded = download(location, downloads / file_name, sha256=sha256, progress=progress, cancel=cancel)
        except BaseException:
            # A partial file stays for the next attempt to resume; an empty folder need not.
            with contextlib.suppress(OSError):
                downloads.rmdir()
            raise
        pack = downloaded
    else:
        pack = Path(location).expanduser()
        if not pack.exists():
            raise PackError(f"{pack} does not exist; give a .quirepack file, an unpacked pack folder or an "
                            "http(s) URL.")
        if sha256 and pack.is_file() and sha256_of(pack, cancel) != sha256.strip().lower():
            raise PackError(f"{pack} does not match the sha256 you gave; the file is damaged or not the one meant.")
    try:
        name = check_name(read_pack_manifest(pack).name)
        with datastore_lock(registry.root, name, f"installing {pack.name}"):
            manifest = install_pack(pack, registry.root, configured_model=configured_model, reembed=reembed,
                                    replace=replace, progress=progress, cancel=cancel,
                                    before_replace=registry.forget)
            registry.source(manifest.name)  # opens as every search will (install_pack built its postings)
    finally:
        if downloaded is not None:
            shutil.rmtree(downloaded.parent, ignore_errors=True)
    return manifest
