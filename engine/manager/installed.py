"""Models installed under ``<home>/models``: the install flow and the record of what is there.

Catalog models are downloaded by :func:`install_model` (verified, atomically installed) and
recorded in ``models/installed.json``; GGUF files a user copies into the folder by hand are listed
too. Nothing here downloads unless :func:`install_model` is called.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from engine.disk import write_replacing
from engine.errors import EngineError, ModelNotFoundError
from engine.manager.catalog import CatalogError, CatalogModel
from engine.manager.download import download, ensure_free_space
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress

log = logging.getLogger(__name__)

MANIFEST_NAME = "installed.json"


@dataclass(frozen=True)
class InstalledModel:
    """A model on disk: a GGUF file or a sentence-transformers folder."""

    name: str
    kind: str
    path: str
    size_bytes: int
    sha256: str = ""
    verified_by: str = ""
    source_url: str = ""
    installed_at: str = ""
    from_catalog: bool = True

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _manifest_path(models_dir: Path) -> Path:
    return models_dir / MANIFEST_NAME


def _read_manifest(models_dir: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(_manifest_path(models_dir).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError:
        log.warning("%s is unreadable; listing models from the folder instead", _manifest_path(models_dir))
        return {}
    return data if isinstance(data, dict) else {}


def _write_manifest(models_dir: Path, manifest: dict[str, dict[str, object]]) -> None:
    """Replace the manifest whole: a crash or a full disk mid-write leaves the old one, never half a new one."""
    models_dir.mkdir(parents=True, exist_ok=True)
    write_replacing(_manifest_path(models_dir), json.dumps(manifest, indent=2, sort_keys=True).encode("utf-8"),
                    models_dir / f".{MANIFEST_NAME}.tmp")


def _disk_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())


def list_installed(models_dir: Path) -> list[InstalledModel]:
    """Recorded catalog installs whose files still exist, then GGUF files added by hand."""
    models: list[InstalledModel] = []
    recorded_paths: set[Path] = set()
    for name, record in sorted(_read_manifest(models_dir).items()):
        path = Path(str(record.get("path", "")))
        if not path.is_absolute():
            path = models_dir / path
        if not path.exists():
            continue
        recorded_paths.add(path.resolve())
        fields = {key: value for key, value in record.items() if key in InstalledModel.__dataclass_fields__}
        fields.update(name=name, path=str(path), size_bytes=_disk_size(path))
        models.append(InstalledModel(**fields))  # type: ignore[arg-type]
    if models_dir.is_dir():
        for gguf in sorted(models_dir.glob("*.gguf")):
            if gguf.resolve() not in recorded_paths:
                models.append(InstalledModel(name=gguf.stem, kind="llm", path=str(gguf),
                                             size_bytes=gguf.stat().st_size, verified_by="added by hand",
                                             from_catalog=False))
    return models


def resolve_model(name_or_path: str, models_dir: Path) -> InstalledModel:
    """An installed model by catalog name or file name, or any existing file/folder path."""
    for model in list_installed(models_dir):
        if name_or_path.strip().lower() in (model.name.lower(), Path(model.path).name.lower()):
            return model
    candidate = Path(name_or_path).expanduser()
    if candidate.exists():
        kind = "llm" if candidate.suffix.lower() == ".gguf" else "embedder"
        return InstalledModel(name=candidate.stem, kind=kind, path=str(candidate.resolve()),
                              size_bytes=_disk_size(candidate), verified_by="chosen by path", from_catalog=False)
    raise ModelNotFoundError(
        f"{name_or_path!r} is neither an installed model nor an existing file. "
        f"See `quire models list`; install one with `quire models download NAME`, or give a .gguf path.")


def install_model(entry: CatalogModel, models_dir: Path, *, progress: ProgressCallback = no_progress,
                  cancel: CancelToken | None = None, endpoint: str | None = None,
                  verify_gguf: Callable[[Path], None] | None = None) -> InstalledModel:
    """Download, verify and record one catalog model; return what was installed.

    ``verify_gguf`` (for language models) runs on the complete download before it is installed
    and raises to refuse it (a damaged header, an architecture the installed llama.cpp lacks).
    """
    if entry.bundled:
        raise CatalogError(f"{entry.title} ships with Quire; there is nothing to download.")
    if not entry.can_download:
        raise CatalogError(f"{entry.title} cannot be downloaded from Quire: {entry.description} "
                           f"See {entry.page_url}.")
    models_dir.mkdir(parents=True, exist_ok=True)
    already = {model.name: model for model in list_installed(models_dir) if model.from_catalog}
    if entry.name in already and (not entry.sha256 or already[entry.name].sha256 == entry.sha256):
        return already[entry.name]
    if entry.file:
        path = _install_file(entry, models_dir, progress, cancel, endpoint, verify_gguf)
    else:
        path = _install_folder(entry, models_dir, progress, cancel, endpoint)
    installed = InstalledModel(
        name=entry.name, kind=entry.kind, path=path.name, size_bytes=_disk_size(path), sha256=entry.sha256,
        verified_by=entry.verified_by, source_url=entry.page_url,
        installed_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    manifest = _read_manifest(models_dir)
    manifest[entry.name] = {key: value for key, value in installed.to_dict().items() if key != "name"}
    _write_manifest(models_dir, manifest)
    log.info("installed %s at %s (%s)", entry.name, path, entry.verified_by)
    return InstalledModel(**{**installed.to_dict(), "path": str(path)})  # type: ignore[arg-type]


def _install_file(entry: CatalogModel, models_dir: Path, progress: ProgressCallback, cancel: CancelToken | None,
                  endpoint: str | None, verify_gguf: Callable[[Path], None] | None) -> Path:
    (_, url), = entry.urls(endpoint)
    if not entry.size_bytes:  # unknown exact size: check against the catalog's estimate up front
        ensure_free_space(models_dir, entry.size_estimate, entry.title)
    return download(url, models_dir / entry.file, sha256=entry.sha256 or None,
                    expected_size=entry.size_bytes or None, progress=progress, cancel=cancel, verify=verify_gguf)


def _install_folder(entry: CatalogModel, models_dir: Path, progress: ProgressCallback, cancel: CancelToken | None,
                    endpoint: str | None) -> Path:
    """Fetch every file into a staging folder, then rename it into place in one step."""
    final = models_dir / entry.name
    staging = models_dir / f".{entry.name}.staging"
    ensure_free_space(models_dir, entry.size_estimate, entry.title)
    urls = entry.urls(endpoint)
    for number, (relative, url) in enumerate(urls, start=1):
        progress(Progress("download", number - 1, len(urls), relative))

        def relay(step: Progress, name: str = relative, number: int = number) -> None:
            progress(Progress("download", step.done, step.total, f"{name} ({number}/{len(urls)})"))

        download(url, staging / relative, progress=relay, cancel=cancel)
    if final.exists():
        shutil.rmtree(final)
    os.replace(staging, final)
    return final


def remove_model(name: str, models_dir: Path) -> InstalledModel:
    """Delete an installed model's files and its record."""
    model = resolve_model(name, models_dir)
    path = Path(model.path)
    if models_dir.resolve() not in path.resolve().parents:
        raise EngineError(f"{path} is outside Quire's models folder; Quire only deletes models it installed.")
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
    manifest = _read_manifest(models_dir)
    manifest.pop(model.name, None)
    _write_manifest(models_dir, manifest)
    return model
