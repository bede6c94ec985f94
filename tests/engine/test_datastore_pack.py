"""Datastore packs: build, verify, install; and every bad pack refused with nothing installed."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.http_server import FileServer

from engine.datastore.manifest import MANIFEST_NAME, PackError, PackModelMismatchError
from engine.embed import HashingEmbedder
from engine.errors import DownloadError, EngineError
from engine.retrieve.fts import build_fts_query
from engine.service import Engine

RECORDS = [{"id": f"rec-{i}", "title": f"Residual networks study {i}",
            "text": f"Deep residual networks number {i} segment street scenes. Wide networks train faster."}
           for i in range(40)]


def make_engine(home: Path, embedder: HashingEmbedder | None = None) -> Engine:
    engine = Engine(home=home)
    engine.embedder = embedder or HashingEmbedder()  # the model is beside the point; its id is not
    return engine


@pytest.fixture
def built(tmp_path: Path) -> Iterator[Path]:
    """A pack of a 40-record datastore, embedded with the hashing double."""
    source_file = tmp_path / "records.jsonl"
    source_file.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    with make_engine(tmp_path / "builder") as engine:
        engine.add_datastore(source_file, "cs")
        (tmp_path / "out").mkdir()
        pack, manifest = engine.pack_datastore("cs", tmp_path / "out", version="1.0")
    assert pack.name == "cs-1.0.quirepack" and manifest.record_count == 40
    yield pack


def members(pack: Path) -> list[tuple[tarfile.TarInfo, bytes]]:
    with tarfile.open(pack, "r:*") as archive:
        return [(m, archive.extractfile(m).read()) for m in archive.getmembers()]  # type: ignore[union-attr]


def rewrite(pack: Path, dest: Path, entries: list[tuple[str, bytes]]) -> Path:
    with tarfile.open(dest, "w:gz") as archive:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return dest


def nothing_installed(home: Path) -> bool:
    """No datastore folder and no staging left (a partial download kept for resuming may stay)."""
    root = home / "datastores"
    return not root.exists() or all(p.name == ".downloads" for p in root.iterdir())


def test_an_installed_pack_searches_with_no_embedding_work(built: Path, tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    with make_engine(tmp_path / "user", embedder) as engine:
        manifest = engine.install_datastore(built)
        assert (manifest.name, manifest.version, manifest.record_count) == ("cs", "1.0", 40)
        assert manifest.embedding_model == embedder.model_id and manifest.embedded_count == manifest.passage_count
        [source] = engine.datastore_sources()
        assert source.pending_count() == 0 and engine.embed_datastore("cs") == 0
        ranked = source.lexical(build_fts_query("residual segment"), 3)
        assert source.hits([ranked[0][0]])[0].doc_id.startswith("rec-")
        vector = embedder.embed(["Residual networks study 7\nDeep residual networks number 7 segment"])[0]
        assert source.hits([source.dense(vector, 1)[0][0]])[0].doc_id == "rec-7"
        info = engine.datastores()[0]
        assert info.version == "1.0" and info.records == 40
        # Installing again is refused unless asked to replace; replacing keeps it working.
        with pytest.raises(PackError, match="already installed"):
            engine.install_datastore(built)
        engine.install_datastore(built, replace=True)
        assert engine.datastores()[0].records == 40
        assert not any(p.name.startswith(".") for p in engine.paths.datastores.iterdir())


def test_a_tampered_file_is_refused_and_nothing_installed(built: Path, tmp_path: Path) -> None:
    entries = [(m.name, data) for m, data in members(built)]
    tampered = []
    for name, data in entries:
        if name == "datastore.db":
            data = data[:-100] + bytes(b ^ 0xFF for b in data[-100:])
        tampered.append((name, data))
    bad = rewrite(built, tmp_path / "tampered.quirepack", tampered)
    with make_engine(tmp_path / "user") as engine, pytest.raises(PackError, match="sha256"):
        engine.install_datastore(bad)
    assert nothing_installed(tmp_path / "user")


def test_an_archive_entry_with_a_path_traversal_name_is_refused(built: Path, tmp_path: Path) -> None:
    entries = [(m.name, data) for m, data in members(built)]
    evil = [*entries, ("../../escaped.db", b"payload")]
    bad = rewrite(built, tmp_path / "evil.quirepack", evil)
    with make_engine(tmp_path / "user") as engine, pytest.raises(PackError, match="not a plain file name"):
        engine.install_datastore(bad)
    assert nothing_installed(tmp_path / "user")
    assert not list(tmp_path.rglob("escaped.db"))
    # A manifest naming a path outside the folder is refused before any data is read.
    manifest = json.loads(entries[0][1])
    manifest["files"][0]["path"] = "../datastore.db"
    worse = rewrite(built, tmp_path / "worse.quirepack", [(MANIFEST_NAME, json.dumps(manifest).encode()), *entries[1:]])
    with make_engine(tmp_path / "user") as engine, pytest.raises(PackError, match="unsafe file"):
        engine.install_datastore(worse)


def test_links_and_unlisted_members_are_refused(built: Path, tmp_path: Path) -> None:
    entries = [(m.name, data) for m, data in members(built)]
    extra = rewrite(built, tmp_path / "extra.quirepack", [*entries, ("notes.txt", b"hello")])
    with make_engine(tmp_path / "user") as engine, pytest.raises(PackError, match="does not list"):
        engine.install_datastore(extra)
    linked = tmp_path / "link.quirepack"
    with tarfile.open(linked, "w:gz") as archive:
        for name, data in entries:
            if name == "vectors.index":
                info = tarfile.TarInfo(name)
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                archive.addfile(info)
                continue
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    with make_engine(tmp_path / "user") as engine, pytest.raises(PackError, match="link"):
        engine.install_datastore(linked)
    assert nothing_installed(tmp_path / "user")


@pytest.mark.parametrize("field", ["name", "record_count", "embedding_model", "files"])
def test_a_manifest_with_a_missing_field_is_refused_by_name(built: Path, tmp_path: Path, field: str) -> None:
    entries = [(m.name, data) for m, data in members(built)]
    manifest = json.loads(entries[0][1])
    del manifest[field]
    bad = rewrite(built, tmp_path / "partial.quirepack", [(MANIFEST_NAME, json.dumps(manifest).encode()), *entries[1:]])
    with make_engine(tmp_path / "user") as engine, pytest.raises(PackError, match=f"lacks {field}"):
        engine.install_datastore(bad)
    assert nothing_installed(tmp_path / "user")


def test_a_record_count_that_does_not_match_the_database_is_refused(built: Path, tmp_path: Path) -> None:
    entries = [(m.name, data) for m, data in members(built)]
    manifest = json.loads(entries[0][1])
    manifest["record_count"] = 41
    bad = rewrite(built, tmp_path / "count.quirepack", [(MANIFEST_NAME, json.dumps(manifest).encode()), *entries[1:]])
    with make_engine(tmp_path / "user") as engine, pytest.raises(PackError, match="promises 41"):
        engine.install_datastore(bad)


def test_a_pack_from_another_embedding_model_is_refused_or_reembedded(built: Path, tmp_path: Path) -> None:
    other = HashingEmbedder(dimension=128)
    with make_engine(tmp_path / "user", other) as engine:
        with pytest.raises(PackModelMismatchError, match="--reembed") as refused:
            engine.install_datastore(built)
        assert HashingEmbedder().model_id in str(refused.value) and other.model_id in str(refused.value)
        assert nothing_installed(tmp_path / "user")
        engine.install_datastore(built, reembed=True)
        source = engine.datastore_registry.source("cs")
        assert not source.index_path.exists()
        assert engine.embed_datastore("cs") == 40
        assert source.index().model_id == other.model_id


def test_a_web_page_is_not_a_pack(tmp_path: Path) -> None:
    page = tmp_path / "download.html"
    page.write_text("<!DOCTYPE html><html><body>Sign in to continue</body></html>")
    with make_engine(tmp_path / "user") as engine:
        with pytest.raises(PackError, match="web page"):
            engine.install_datastore(page)
        jsonl = tmp_path / "records.jsonl"
        jsonl.write_text(json.dumps(RECORDS[0]) + "\n")
        with pytest.raises(PackError, match="datastore add"):
            engine.install_datastore(jsonl)
        with pytest.raises(PackError, match="does not exist"):
            engine.install_datastore(tmp_path / "missing.quirepack")
    assert nothing_installed(tmp_path / "user")


def test_install_from_a_url(built: Path, tmp_path: Path) -> None:
    with FileServer() as server, make_engine(tmp_path / "user") as engine:
        server.add("/packs/cs.quirepack", built.read_bytes())
        server.add_html("/login")
        with pytest.raises(EngineError, match=r"(?i)html|web page"):
            engine.install_datastore(server.url("/login"))
        assert nothing_installed(tmp_path / "user")
        manifest = engine.install_datastore(server.url("/packs/cs.quirepack"))
        assert manifest.record_count == 40 and engine.datastores()[0].records == 40
        assert not (engine.paths.datastores / ".downloads").exists()
        with pytest.raises((DownloadError, PackError), match="sha256"):
            engine.install_datastore(server.url("/packs/cs.quirepack"), replace=True, sha256="0" * 64)
