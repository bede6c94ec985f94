"""A datastore published to a real PostgreSQL + pgvector server ranks as the local one and fails cleanly."""

from __future__ import annotations

import json
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fixtures.pg_server import READER_PASSWORD, PgServer

from engine.cli.main import main
from engine.datastore.server import publish as publish_module
from engine.datastore.server import source as server_source_module
from engine.datastore.server.connection import save_password, shown, split_password
from engine.embed import HashingEmbedder
from engine.errors import Cancelled, DatastoreUnavailableError, EngineError
from engine.progress import CancelToken, Progress
from engine.retrieve.fts import build_fts_query
from engine.service import Engine

TOPICS = ["residual networks", "semantic segmentation", "continual learning", "graph neural networks",
          "protein folding", "machine translation", "speech recognition", "reinforcement learning"]


def records() -> list[dict[str, object]]:
    """60 papers whose texts share and differ in words, some long enough for several passages."""
    found = []
    for number in range(60):
        topic, other = TOPICS[number % len(TOPICS)], TOPICS[(number * 3 + 1) % len(TOPICS)]
        sentences = [f"We study {topic} with method {number}.", f"Compared with {other}, it needs {number % 7} "
                     "fewer layers.", f"Our {topic} results improve accuracy by {number % 11} points."]
        text = " ".join(sentences * (1 + (number % 5) * 12))
        found.append({"id": f"P{number}", "title": f"{topic.title()} paper {number}", "text": text,
                      "doi": f"10.1000/p{number}", "authors": [f"Author {number}"], "year": 2000 + number % 20})
    return found


@pytest.fixture(scope="module")
def published(pg_server: PgServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """The publisher's engine: datastore "cs" imported locally (hashing vectors) and published to the server."""
    folder = tmp_path_factory.mktemp("publisher")
    path = folder / "cs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records()), encoding="utf-8")
    with Engine(home=folder / "home") as engine:
        engine.embedder = HashingEmbedder()
        engine.add_datastore(path, "cs")
        report = engine.publish_datastore("cs", pg_server.url(), reader="quire_reader")
        assert report.passages == engine.datastore_registry.source("cs").store.counts()["passages"] > 60
        yield engine


@pytest.fixture
def reader(published: Engine, pg_server: PgServer, tmp_path: Path) -> Iterator[Engine]:
    """A lab member's engine, connected to the published datastore as "lab" with the read-only role."""
    with Engine(home=tmp_path / "member") as engine:
        engine.embedder = HashingEmbedder()
        engine.connect_datastore("lab", pg_server.reader_url())
        yield engine


def test_the_server_ranks_bm25_and_dense_as_the_local_datastore(published: Engine, reader: Engine) -> None:
    local = published.datastore_registry.source("cs")
    server = reader.datastore_registry.server_source("lab")
    for question in ("residual networks fewer layers", "protein folding accuracy", "method 17", "translation"):
        mine = local.lexical(build_fts_query(question), 20)
        theirs = server.lexical(build_fts_query(question), 20)
        assert [pid.split(":", 1)[1] for pid, _ in theirs] == [pid.split(":", 1)[1] for pid, _ in mine]
        assert np.allclose([s for _, s in theirs], [s for _, s in mine], rtol=1e-5)
        vector = HashingEmbedder().embed([question])[0]
        near_local = local.dense(vector, 10)
        near_server = server.dense(vector, 10)
        # float16 on the server: the same neighbours, scores within float16's precision.
        assert {p.split(":", 1)[1] for p, _ in near_server[:5]} <= {p.split(":", 1)[1] for p, _ in near_local}
        assert np.allclose([s for _, s in near_server], [s for _, s in near_local], atol=2e-3)
    within = server.lexical(build_fts_query("residual networks"), 5, doc_ids=["P8"])
    assert within and {pid.split("#")[0] for pid, _ in within} == {"lab:P8"}
    assert {pid.split("#")[0] for pid, _ in server.dense(HashingEmbedder().embed(["x"])[0], 5, ["P3"])} == {"lab:P3"}
    assert server.stem_frequencies("protein", "protein\0") == local.stem_frequencies("protein", "protein\0") != {}
    assert server.stem_frequencies("a", "b") == local.stem_frequencies("a", "b")


def test_server_hits_carry_the_record_and_merge_like_local_ones(published: Engine, reader: Engine) -> None:
    server = reader.datastore_registry.server_source("lab")
    [hit] = server.hits(["lab:P5#0"])
    local = published.datastore_registry.source("cs").hits(["cs:P5#0"])[0]
    assert (hit.doc_id, hit.source, hit.text, hit.page) == ("P5", "lab", local.text, None)
    assert hit.bib == local.bib and hit.bib.doi == "10.1000/p5"
    assert server.hits(["lab:nope#0", "library-doc", "lab:P5#0"]) == [hit]
    stored = server.vectors(["lab:P5#0"])["lab:P5#0"]
    assert np.allclose(stored, local_vector(published, "cs:P5#0"), atol=1e-3)
    found = reader.search("protein folding accuracy", k=5)
    assert found and {h.source for h in found} == {"lab"}


def local_vector(engine: Engine, passage_id: str) -> np.ndarray:
    return engine.datastore_registry.source("cs").vectors([passage_id])[passage_id]


def test_the_password_is_kept_in_a_private_libpq_file_not_in_settings(reader: Engine) -> None:
    root = reader.paths.datastores
    assert READER_PASSWORD not in (root / "servers.json").read_text()
    assert not reader.paths.config_file.exists() or READER_PASSWORD not in reader.paths.config_file.read_text()
    passfile = root / "servers.pgpass"
    assert READER_PASSWORD in passfile.read_text()
    assert stat.S_IMODE(passfile.stat().st_mode) == 0o600
    [info] = [i for i in reader.datastores() if i.name == "lab"]
    assert info.on_server and info.state == "connected" and info.records == 60
    assert READER_PASSWORD not in info.location
    doctor = reader.doctor()
    assert "sent to the server datastores (lab at postgresql://quire_reader@" in doctor["network"]
    assert not doctor["problems"]


def test_a_wrong_password_or_a_missing_datastore_refuses_to_connect(pg_server: PgServer, tmp_path: Path) -> None:
    with Engine(home=tmp_path / "h") as engine:
        with pytest.raises(DatastoreUnavailableError, match="refused the password"):
            engine.connect_datastore("lab", pg_server.reader_url("wrong"))
        pg_server.admin("CREATE DATABASE novector")
        try:
            with pytest.raises(DatastoreUnavailableError, match="no pgvector extension"):
                engine.connect_datastore("lab", pg_server.url(database="novector"))
        finally:
            pg_server.admin("DROP DATABASE novector")
        with pytest.raises(DatastoreUnavailableError, match="holds no Quire datastore in the schema 'other'"):
            engine.connect_datastore("lab", pg_server.reader_url(), schema="other")
        assert engine.datastore_registry.server_names() == []


def test_without_the_driver_connecting_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with Engine(home=tmp_path / "h") as engine, pytest.raises(EngineError, match=r'pip install "quire\[server\]"'):
        engine.connect_datastore("lab", "postgresql://someone@example.org/lab")


def test_another_schema_version_is_left_out_with_a_notice(published: Engine, reader: Engine,
                                                          pg_server: PgServer) -> None:
    pg_server.admin("UPDATE quire.meta SET value = '99' WHERE key = 'schema_version'")
    try:
        notices: list[str] = []
        hits = reader.search("protein folding", k=5, progress=lambda p: notices.append(p.label))
        assert hits == []
        assert any("'lab' was left out" in n and "schema version 99" in n for n in notices)
    finally:
        pg_server.admin("UPDATE quire.meta SET value = '1' WHERE key = 'schema_version'")


def test_a_query_over_its_time_limit_is_stopped_and_named(published: Engine, pg_server: PgServer,
                                                          tmp_path: Path) -> None:
    import psycopg

    with Engine(home=tmp_path / "h") as engine:
        engine.embedder = HashingEmbedder()
        engine.connect_datastore("lab", pg_server.reader_url(), timeout_s=0.5)
        server = engine.datastore_registry.server_source("lab")
        server.describe()  # connected before the table is locked
        with psycopg.connect(pg_server.url()) as admin:  # holds the lock until this transaction ends
            admin.execute("LOCK TABLE quire.passages IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(DatastoreUnavailableError, match=r"'lab' .* longer than its limit of 0.5 s"):
                server.lexical(build_fts_query("protein"), 5)


def test_a_stopped_publish_resumes_after_its_last_batch(pg_server: PgServer, published: Engine,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(publish_module, "PASSAGE_BATCH", 25)
    cancel = CancelToken()
    seen: list[Progress] = []

    def stop_after_two_batches(progress: Progress) -> None:
        seen.append(progress)
        if progress.stage == "publish" and progress.label.startswith("passages 50 "):
            cancel.cancel()

    with pytest.raises(Cancelled):
        published.publish_datastore("cs", pg_server.url(), schema="resumed", progress=stop_after_two_batches,
                                    cancel=cancel)
    assert pg_server.admin("SELECT count(*) FROM resumed.passages") == [(50,)]
    assert pg_server.admin("SELECT value FROM resumed.meta WHERE key = 'state'") == [("loading",)]
    report = published.publish_datastore("cs", pg_server.url(), schema="resumed")
    assert report.resumed and not report.already_published
    total = published.datastore_registry.source("cs").store.counts()["passages"]
    assert pg_server.admin("SELECT count(*), count(DISTINCT rowid) FROM resumed.passages") == [(total, total)]
    assert published.publish_datastore("cs", pg_server.url(), schema="resumed").already_published


def test_the_cli_publishes_connects_lists_and_disconnects(published: Engine, pg_server: PgServer, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    publisher = str(published.paths.home)
    assert main(["--home", publisher, "datastore", "publish", "cs", pg_server.url(), "--schema", "cli",
                 "--reader", "quire_reader"]) == 0
    assert "published cs: 60 records" in capsys.readouterr().out
    member = str(tmp_path / "member")
    assert main(["--home", member, "datastore", "connect", "lab", pg_server.reader_url(), "--schema", "cli"]) == 0
    assert "connected lab: 60 records" in capsys.readouterr().out
    assert main(["--home", member, "datastore", "list"]) == 0
    listed = capsys.readouterr().out
    assert "lab" in listed and "on postgresql://quire_reader@" in listed and "connected" in listed
    assert READER_PASSWORD not in listed
    main(["--home", member, "doctor"])
    assert "network: questions searched with datastores are sent to the server datastores (lab at" in (
        capsys.readouterr().out)
    assert main(["--home", member, "datastore", "remove", "lab"]) == 0
    assert "disconnected server datastore lab" in capsys.readouterr().out
    main(["--home", member, "doctor"])
    assert "network: offline: questions and papers stay on this computer" in capsys.readouterr().out


def test_a_pack_file_publishes_as_its_installed_datastore(published: Engine, pg_server: PgServer,
                                                          tmp_path: Path) -> None:
    pack, manifest = published.pack_datastore("cs", tmp_path / "cs.quirepack")
    report = published.publish_datastore(str(pack), pg_server.url(), schema="frompack")
    assert (report.records, report.passages, report.embedding_model) == (
        manifest.record_count, manifest.passage_count, manifest.embedding_model)
    same = pg_server.admin("SELECT count(*) FROM (SELECT rowid, text, lexemes, embedding FROM frompack.passages "
                           "EXCEPT SELECT rowid, text, lexemes, embedding FROM quire.passages) d")
    assert same == [(0,)]
    pg_server.admin("UPDATE frompack.meta SET value = 'other' WHERE key = 'name'")
    with pytest.raises(EngineError, match=r"holds another datastore \('other'"):
        published.publish_datastore(str(pack), pg_server.url(), schema="frompack")
    assert published.publish_datastore(str(pack), pg_server.url(), schema="frompack", replace=True).passages == (
        manifest.passage_count)


def test_a_bad_connection_string_is_named_in_one_line_without_its_password() -> None:
    with pytest.raises(EngineError, match="is not a PostgreSQL connection string") as bad:
        split_password("host=db.lab.org password=s3cret dbname")
    assert "s3cret" not in str(bad.value) and "password=***" in str(bad.value)
    with pytest.raises(EngineError) as huge:
        split_password("x" * 100_000)
    assert len(str(huge.value)) < 500


def test_the_connection_string_keeps_sslmode_and_loses_its_password(tmp_path: Path) -> None:
    conninfo, params, password = split_password("postgresql://ann:p%3Ass@db.lab.org:5433/corpus?sslmode=verify-full")
    assert password == "p:ss" and "p:ss" not in conninfo and "password" not in conninfo
    assert params == {"user": "ann", "host": "db.lab.org", "port": "5433", "dbname": "corpus",
                      "sslmode": "verify-full"}
    assert "sslmode=verify-full" in conninfo
    assert shown(conninfo) == "postgresql://ann@db.lab.org:5433/corpus"
    passfile = tmp_path / "pgpass"
    save_password(passfile, params, password)
    save_password(passfile, params, "new:one")  # the same server and user: replaced, not added
    assert passfile.read_text() == "db.lab.org:5433:corpus:ann:new\\:one\n"


def test_a_large_datastore_is_searched_through_the_hnsw_index(published: Engine, reader: Engine, pg_server: PgServer,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    server = reader.datastore_registry.server_source("lab")
    vector = HashingEmbedder().embed(["protein folding accuracy"])[0]
    exact = server.dense(vector, 10)
    monkeypatch.setattr(server_source_module, "FLAT_LIMIT", 0)  # as if the datastore were larger than a flat index
    # A table of a few hundred rows is cheaper to scan, so the planner would not use the index as it does at scale.
    server._query("SET enable_seqscan = off")
    before = index_scans(server)
    approximate = server.dense(vector, 10)
    assert index_scans(server) > before  # the HNSW index answered
    assert [pid for pid, _ in approximate] == [pid for pid, _ in exact]  # a few hundred passages: HNSW is exact


def index_scans(server: Any) -> int:
    server._query("SELECT pg_stat_force_next_flush()")  # this session's counts, now
    return int(server._query("SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'passages_embedding' "
                             "AND schemaname = 'quire'")[0][0])
