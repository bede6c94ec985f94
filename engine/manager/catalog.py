"""The catalog of recommended models: data in ``resources/catalog/*.toml``, read here.

An entry names where a model comes from (Hugging Face repository, file, revision), how to verify
it (sha256 and exact size when published) and what it needs (parameters, quantization, the
shapes that size its KV cache). Loading the catalog never touches the network.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from engine.errors import EngineError
from engine.manager.download import hf_url

CATALOG_SCHEMA_VERSION = 1
KINDS = ("llm", "embedder", "reranker")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_GB = 1024**3


class CatalogError(EngineError):
    """The bundled catalog is malformed (a packaging bug) or names an unknown model."""


@dataclass(frozen=True)
class CatalogModel:
    """One recommended model."""

    name: str
    kind: str
    title: str
    repo: str
    license: str
    description: str = ""
    source_note: str = ""
    file: str = ""  # a single-file model (GGUF)
    files: tuple[str, ...] = ()  # a folder model (sentence-transformers)
    revision: str = "main"
    sha256: str = ""
    sha256_note: str = ""
    size_bytes: int = 0  # exact, when published; 0 = unknown
    approx_size_gb: float = 0.0
    bundled: bool = False
    downloadable: bool = True
    architecture: str = ""
    parameters_b: float = 0.0
    quantization: str = ""
    context_length: int = 0
    n_layers: int = 0
    n_kv_heads: int = 0
    head_dim: int = 0
    n_heads: int = 0
    vocab_size: int = 0
    min_ram_gb: float = 0.0
    dimensions: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def size_estimate(self) -> int:
        """Bytes to expect: the exact size when known, else the approximate one."""
        return self.size_bytes or int(self.approx_size_gb * _GB)

    @property
    def verified_by(self) -> str:
        """How a download of this entry is checked, in words for the user."""
        if self.sha256:
            return "sha256"
        if self.kind == "llm":
            return "size, GGUF header and architecture (no published sha256)"
        return "completeness only (no published sha256)"

    @property
    def can_download(self) -> bool:
        return self.downloadable and not self.bundled and bool(self.file or self.files)

    def urls(self, endpoint: str | None = None) -> list[tuple[str, str]]:
        """(relative path, URL) of every file to fetch."""
        names = [self.file] if self.file else list(self.files)
        return [(name, hf_url(self.repo, name, self.revision, endpoint)) for name in names]

    @property
    def page_url(self) -> str:
        return f"https://huggingface.co/{self.repo}"


def _entry(raw: dict[str, Any]) -> CatalogModel:
    known = set(CatalogModel.__dataclass_fields__) - {"extra", "files"}
    missing = [key for key in ("name", "kind", "title", "repo", "license") if not raw.get(key)]
    if missing:
        raise CatalogError(f"catalog entry {raw.get('name', '?')!r} lacks {', '.join(missing)}")
    if raw["kind"] not in KINDS:
        raise CatalogError(f"catalog entry {raw['name']!r} has unknown kind {raw['kind']!r}")
    sha256 = str(raw.get("sha256", "")).lower()
    if sha256 and not _SHA256.match(sha256):
        raise CatalogError(f"catalog entry {raw['name']!r} has a malformed sha256")
    if not sha256 and raw.get("file") and not raw.get("sha256_note"):
        raise CatalogError(f"catalog entry {raw['name']!r} has no sha256 and no sha256_note saying why")
    values = {key: value for key, value in raw.items() if key in known}
    values["sha256"] = sha256
    return CatalogModel(**values, files=tuple(raw.get("files", ())),
                        extra={key: value for key, value in raw.items() if key not in known and key != "files"})


def parse_catalog(text: str) -> list[CatalogModel]:
    """Parse catalog TOML; raise :class:`CatalogError` on anything malformed."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"the model catalog is not valid TOML: {exc}") from exc
    if data.get("schema_version") != CATALOG_SCHEMA_VERSION:
        raise CatalogError(f"the model catalog has schema version {data.get('schema_version')!r}; "
                           f"this Quire reads version {CATALOG_SCHEMA_VERSION}")
    entries = [_entry(raw) for raw in data.get("model", [])]
    names = [entry.name for entry in entries]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise CatalogError(f"the model catalog names {', '.join(duplicates)} twice")
    return entries


def load_catalog() -> list[CatalogModel]:
    """Every model in the bundled catalog files, in file order."""
    folder = resources.files("resources") / "catalog"
    entries: list[CatalogModel] = []
    for item in sorted(folder.iterdir(), key=lambda item: item.name):
        if item.name.endswith(".toml"):
            entries.extend(parse_catalog(item.read_text(encoding="utf-8")))
    return entries


def find_model(name: str, catalog: list[CatalogModel] | None = None) -> CatalogModel:
    """The catalog entry called ``name`` (case-insensitive)."""
    entries = catalog if catalog is not None else load_catalog()
    for entry in entries:
        if entry.name.lower() == name.strip().lower():
            return entry
    available = ", ".join(entry.name for entry in entries)
    raise CatalogError(f"No model called {name!r} in the catalog. Available: {available}.")
