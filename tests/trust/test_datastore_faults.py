"""Datastores under attack and under load: crafted packs, absurd JSON, two writers at once.

The packs are crafted as an attacker would: the data changed, then every checksum recomputed
(the Quire index header's blake2b, the manifest's size and sha256), so that only checking what
the data *is* can refuse them. Commands that could hang run as subprocesses with a deadline.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import sqlite3
import struct
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.datastore.manifest import MANIFEST_NAME, PackError
from engine.datastore.store import DatastoreStore
from engine.embed import HashingEmbedder
from engine.errors import IndexCorruptError, StoreError
from engine.index.storage import MAGIC, load_index
from engine.service import Engine

REPO = Path(__file__).resolve().parents[2]
RECORDS = [{"id": f"rec-{i}", "title": f"Graph kernels study {i}",
            "text": f"Graph kernels number {i} compare molecules. Random walks count shared paths."} for i in range(30)]


def make_engine(home: Path) -> Engine:
    engine = Engine(home=home)
    engine.embedder = HashingEmbedder()  # which model embeds is beside the point here
    return engine


def quire(home: Path, *args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine.cli.main", "--home", str(home), *args],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=timeout, check=False, cwd=REPO)


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    """A real pack of a small datastore with its vector index."""
    with make_engine(tmp_path / "builder") as engine:
        engine.add_datastore(write_jsonl(tmp_path / "records.jsonl", RECORDS), "graphs")
        (tmp_path / "out").mkdir()
        built, _ = engine.pack_datastore("graphs", tmp_path / "out", version="1")
    return built


def recrafted(pack: Path, dest: Path, change: dict[str, Callable[[bytes], bytes]]) -> Path:
    """``pack`` with some members changed and the manifest's sizes and sha256s recomputed to match."""
    with tarfile.open(pack, "r:*") as archive:
        members = {m.name: archive.extractfile(m).read() for m in archive.getmembers()}  # type: ignore[union-attr]
    for name, edit in change.items():
        members[name] = edit(members[name])
    manifest = json.loads(members.pop(MANIFEST_NAME))
    for entry in manifest["files"]:
        data = members[entry["path"]]
        entry["size"], entry["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    with tarfile.open(dest, "w:gz") as archive:
        for name, data in [(MANIFEST_NAME, json.dumps(manifest).encode()), *members.items()]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return dest


def faiss_vector_size_changed(index_file: bytes) -> bytes:
    """The index with the length of FAISS's stored vector array set to 256 G floats (its blake2b recomputed)."""
    (length,) = struct.unpack_from("<I", index_file, len(MAGIC))
    start = len(MAGIC) + 4 + length
    header = json.loads(index_file[len(MAGIC) + 4:start])
    sections, offset = {}, start
    for name, size in header["sections"].items():
        sections[name] = bytearray(index_file[offset:offset + size])
        offset += size
    stored = struct.pack("<q", header["count"] * header["dimension"])
    at = bytes(sections["faiss"]).index(stored)  # the length field in front of the flat index's codes
    struct.pack_into("<q", sections["faiss"], at, (1 << 38) - 1)
    digest = hashlib.blake2b(digest_size=16)
    for data in sections.values():
        digest.update(data)
    header["checksum"] = digest.hexdigest()
    encoded = json.dumps(header, sort_keys=True).encode()
    return MAGIC + struct.pack("<I", len(encoded)) + encoded + b"".join(bytes(s) for s in sections.values())


def nothing_installed(home: Path) -> bool:
    root = home / "datastores"
    return not root.exists() or not [p for p in root.iterdir() if not p.name.endswith(".lock")]


# --- a FAISS header byte changed ------------------------------------------------------------


def test_a_pack_whose_faiss_index_cannot_load_is_refused(pack: Path, tmp_path: Path) -> None:
    crafted = recrafted(pack, tmp_path / "crafted.quirepack", {"vectors.index": faiss_vector_size_changed})
    home = tmp_path / "user"
    with make_engine(home) as engine, pytest.raises(PackError, match="vector index in the pack is damaged"):
        engine.install_datastore(crafted)
    assert nothing_installed(home)


def test_an_index_that_fails_to_load_in_any_way_is_damage_and_is_rebuilt(pack: Path, tmp_path: Path) -> None:
    home = tmp_path / "user"
    with make_engine(home) as engine:
        engine.install_datastore(pack)
    index_path = home / "datastores" / "graphs" / "vectors.index"
    index_path.write_bytes(faiss_vector_size_changed(index_path.read_bytes()))  # damaged on disk after install
    with pytest.raises(IndexCorruptError):  # not MemoryError (std::bad_alloc), which nothing caught
        load_index(index_path)
    with make_engine(home) as engine:
        hits = engine.search("random walks over molecules", k=3, source="graphs", rewrite=False, rerank="none")
        assert hits and all(hit.source == "graphs" for hit in hits)


# --- a database that is not what Quire writes -------------------------------------------------


def records_as_endless_view(database: bytes) -> bytes:
    """The pack's database with ``records`` replaced by a view over a recursive CTE that never ends."""
    return _edited_database(database, [
        "DROP TABLE records",
        "CREATE VIEW records AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
        "SELECT x AS rowid, 'id' || x AS id, 't' AS title, NULL AS year, '' AS url, '[]' AS authors, '' AS doi, "
        "'' AS arxiv_id, '' AS norm_title, '' AS origin, 1 AS import_id, x AS line, 1 AS word_count, "
        "1 AS passage_count FROM n"])


def passages_with_a_trigger(database: bytes) -> bytes:
    return _edited_database(database, ["CREATE TRIGGER spy AFTER INSERT ON passages BEGIN "
                                       "DELETE FROM records; END"])


def _edited_database(database: bytes, statements: list[str]) -> bytes:
    scratch = Path(os.environ.get("TMPDIR", "/tmp")) / f"quire-crafted-{os.getpid()}-{time.monotonic_ns()}.db"
    scratch.write_bytes(database)
    try:
        with sqlite3.connect(scratch) as conn:
            for statement in statements:
                conn.execute(statement)
        conn.close()
        return scratch.read_bytes()
    finally:
        scratch.unlink()


@pytest.mark.parametrize("craft", [records_as_endless_view, passages_with_a_trigger], ids=["endless-view", "trigger"])
def test_a_pack_whose_database_schema_is_not_quires_is_refused_at_once(pack: Path, tmp_path: Path,
                                                                       craft: Callable[[bytes], bytes]) -> None:
    crafted = recrafted(pack, tmp_path / "crafted.quirepack", {"datastore.db": craft})
    home = tmp_path / "user"
    done = quire(home, "datastore", "install", str(crafted), "--reembed", "--no-embed", timeout=120)
    assert done.returncode == 1, done.stderr
    assert "not one Quire wrote" in done.stderr and "Traceback" not in done.stderr
    assert nothing_installed(home), list((home / "datastores").iterdir())


def test_queries_on_a_datastore_are_bounded(tmp_path: Path) -> None:
    store = DatastoreStore(tmp_path / "datastore.db", create=True)
    try:
        endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
        with store.bounded(0.5), pytest.raises(StoreError, match="took too long"):
            store.query(endless)
        assert store.counts()["records"] == 0  # the connection is still usable
    finally:
        store.close()


# A process started in the background by a non-interactive shell (`make test &`) inherits SIGINT
# ignored, and Python then installs no Ctrl-C handler; a terminal user's quire has one, so the child
# restores it.
_ENDLESS_QUERY = """
import signal
import sys
from pathlib import Path
from engine.datastore.store import DatastoreStore

signal.signal(signal.SIGINT, signal.default_int_handler)
store = DatastoreStore(Path(sys.argv[1]), create=True)
print("querying", flush=True)
try:
    store.query("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n")
except KeyboardInterrupt:
    print("stopped by Ctrl-C", flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_a_query_that_would_never_end(tmp_path: Path) -> None:
    running = subprocess.Popen([sys.executable, "-c", _ENDLESS_QUERY, str(tmp_path / "datastore.db")],
                               env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert running.stdout is not None
    assert running.stdout.readline() == "querying\n", running.stderr.read() if running.stderr else ""
    time.sleep(1.0)  # well inside the query: SQLite's own loop, where Python's signal handler cannot run
    running.send_signal(signal.SIGINT)
    out, err = running.communicate(timeout=60)
    assert out == "stopped by Ctrl-C\n", err


# --- one absurd line ----------------------------------------------------------------------


def test_a_json_line_nested_100000_deep_is_reported_and_skipped(tmp_path: Path) -> None:
    source = tmp_path / "records.jsonl"
    deep = "[" * 100_000 + "]" * 100_000
    lines = [json.dumps(RECORDS[0]), json.dumps({"id": "deep", "text": "x", "authors": "AUTHORS"}),
             json.dumps(RECORDS[1])]
    source.write_text("\n".join([lines[0], lines[1].replace('"AUTHORS"', deep), deep, lines[2]]) + "\n")
    with make_engine(tmp_path / "home") as engine:
        report = engine.add_datastore(source, "deep", embed=False)
    assert report.records_added == 2
    assert [problem.line for problem in report.problems] == [2, 3]
    assert all("nested too deeply" in problem.reason for problem in report.problems)


# --- two writers ----------------------------------------------------------------------------


@pytest.mark.slow
def test_two_imports_into_one_datastore_never_interleave(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "first.jsonl", [
        {"id": f"a-{i}", "title": f"First {i}", "text": f"alpha words number {i} " * 40} for i in range(20_000)])
    second = write_jsonl(tmp_path / "second.jsonl", [
        {"id": f"b-{i}", "title": f"Second {i}", "text": f"beta words number {i} " * 40} for i in range(500)])
    home = tmp_path / "home"
    command = [sys.executable, "-m", "engine.cli.main", "--home", str(home), "datastore", "add"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    running = subprocess.Popen([*command, str(first), "--name", "shared", "--no-embed"], env=env, cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = home / "datastores" / ".shared.lock"
    deadline = time.monotonic() + 120
    while running.poll() is None and time.monotonic() < deadline and not (lock.exists() and lock.read_text()):
        time.sleep(0.05)
    assert running.poll() is None, "the first import ended before the second could start"
    second_done = quire(home, "datastore", "add", str(second), "--name", "shared", "--no-embed")
    _, first_err = running.communicate(timeout=600)

    assert running.returncode == 0, first_err
    assert second_done.returncode == 1 and "Traceback" not in second_done.stderr, second_done.stderr
    assert "being changed right now by Quire process" in second_done.stderr
    # Once the first is done, the second goes in; every record is there exactly once, and indexed.
    assert quire(home, "datastore", "add", str(second), "--name", "shared", "--no-embed").returncode == 0
    with make_engine(home) as engine:
        [source] = engine.datastore_sources()
        records, passages, fts = source.store.query(
            "SELECT (SELECT count(*) FROM records), (SELECT count(*) FROM passages), "
            "(SELECT count(*) FROM passages_fts_docsize)")[0]
        assert records == 20_500 and passages == fts


# --- packs that contradict themselves -----------------------------------------------------------


def repacked(pack: Path, dest: Path, manifest_bytes: Callable[[dict[str, object]], bytes],
             extra: dict[str, bytes] | None = None) -> Path:
    """``pack`` with its manifest rewritten by ``manifest_bytes`` (after ``extra`` members are listed in it)."""
    with tarfile.open(pack, "r:*") as archive:
        members = {m.name: archive.extractfile(m).read() for m in archive.getmembers()}  # type: ignore[union-attr]
    manifest = json.loads(members.pop(MANIFEST_NAME))
    for name, data in (extra or {}).items():
        members[name] = data
        manifest["files"].append({"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    with tarfile.open(dest, "w:gz") as archive:
        for name, data in [(MANIFEST_NAME, manifest_bytes(manifest)), *members.items()]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return dest


def four_kb_flipped(database: bytes) -> bytes:
    """4 KB in the middle of the file, every bit inverted (a disk or a download gone bad, or a pack maker's edit)."""
    middle = (len(database) // 2) & ~4095
    return database[:middle] + bytes(b ^ 0xFF for b in database[middle:middle + 4096]) + database[middle + 4096:]


def test_a_pack_whose_database_has_flipped_bytes_is_refused(pack: Path, tmp_path: Path) -> None:
    crafted = recrafted(pack, tmp_path / "crafted.quirepack", {"datastore.db": four_kb_flipped})
    home = tmp_path / "user"
    with make_engine(home) as engine, pytest.raises(PackError, match=r"damaged|malformed"):
        engine.install_datastore(crafted, reembed=True)
    assert nothing_installed(home)


@pytest.mark.parametrize("dimension", [0, 10 ** 12, 1e12, "384", 768])
def test_a_manifest_dimension_that_is_not_the_index_s_is_refused(pack: Path, tmp_path: Path,
                                                                 dimension: object) -> None:
    crafted = repacked(pack, tmp_path / "crafted.quirepack",
                       lambda manifest: json.dumps({**manifest, "embedding_dimension": dimension}).encode())
    home = tmp_path / "user"
    with make_engine(home) as engine, pytest.raises(PackError, match="dimension"):
        engine.install_datastore(crafted)
    assert nothing_installed(home)


def test_a_pack_file_named_where_a_folder_belongs_is_refused(pack: Path, tmp_path: Path) -> None:
    crafted = repacked(pack, tmp_path / "crafted.quirepack", lambda manifest: json.dumps(manifest).encode(),
                       extra={"bm25": b"not the BM25 postings folder"})
    home = tmp_path / "user"
    with make_engine(home) as engine, pytest.raises(PackError, match="'bm25', which is not a file a datastore pack"):
        engine.install_datastore(crafted)
    assert nothing_installed(home)


def test_a_manifest_nested_100000_deep_is_refused_without_a_traceback(pack: Path, tmp_path: Path) -> None:
    crafted = repacked(pack, tmp_path / "crafted.quirepack",
                       lambda manifest: b'{"files": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    home = tmp_path / "user"
    done = quire(home, "datastore", "install", str(crafted))
    assert done.returncode == 1, done.stderr
    assert "nested too deeply" in done.stderr and "Traceback" not in done.stderr
    assert nothing_installed(home)


@pytest.mark.slow
def test_remove_refuses_while_an_import_runs(tmp_path: Path) -> None:
    records = write_jsonl(tmp_path / "big.jsonl", [
        {"id": f"a-{i}", "title": f"First {i}", "text": f"alpha words number {i} " * 40} for i in range(12_000)])
    home = tmp_path / "home"
    running = subprocess.Popen([sys.executable, "-m", "engine.cli.main", "--home", str(home), "datastore", "add",
                                str(records), "--name", "shared", "--no-embed"], env={**os.environ, "PYTHONPATH":
                                                                                      str(REPO)},
                               cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = home / "datastores" / ".shared.lock"
    deadline = time.monotonic() + 120
    while running.poll() is None and time.monotonic() < deadline and not (lock.exists() and lock.read_text()):
        time.sleep(0.05)
    assert running.poll() is None, "the import ended before the removal could start"

    removal = quire(home, "datastore", "remove", "shared")
    _, import_err = running.communicate(timeout=600)

    assert removal.returncode == 1 and "Traceback" not in removal.stderr, removal.stderr
    assert "being changed right now by Quire process" in removal.stderr and "importing big.jsonl" in removal.stderr
    assert running.returncode == 0, import_err  # the import was not pulled from under itself
    with make_engine(home) as engine:
        [source] = engine.datastore_sources()
        assert source.store.counts()["records"] == 12_000
    assert quire(home, "datastore", "remove", "shared").returncode == 0  # once it is done, removal works
    assert nothing_installed(home)
