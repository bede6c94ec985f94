"""A server datastore that fails mid-use (killed, restarted, password revoked, table dropped): one clear
notice naming it, and the library and local datastores still answer."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from fixtures.pdfs import paper_text, text_pdf
from fixtures.pg_server import PgServer

from engine.datastore.server import source as server_source
from engine.embed import HashingEmbedder
from engine.service import Engine
from engine.types import SearchHit

QUESTION = "protein folding retrieval"


@pytest.fixture(scope="module")
def lab(pg_server: PgServer, tmp_path_factory: pytest.TempPathFactory) -> PgServer:
    """The server with a published datastore about protein folding, readable by quire_reader."""
    folder = tmp_path_factory.mktemp("publisher")
    path = folder / "lab.jsonl"
    path.write_text("".join(json.dumps({"id": f"L{n}", "title": f"Protein folding {n}", "text": f"Protein folding "
                                        f"retrieval study {n} measures structures.", "doi": f"10.1/l{n}"}) + "\n"
                            for n in range(20)), encoding="utf-8")
    with Engine(home=folder / "home") as engine:
        engine.embedder = HashingEmbedder()
        engine.add_datastore(path, "lab")
        engine.publish_datastore("lab", pg_server.url(), reader="quire_reader")
    return pg_server


@pytest.fixture
def member(lab: PgServer, tmp_path: Path) -> Iterator[Engine]:
    """A member's Quire: one PDF in the library, a local datastore, and the lab's server datastore."""
    with Engine(home=tmp_path / "member") as engine:
        engine.embedder = HashingEmbedder()
        list(engine.add_documents([text_pdf(tmp_path / "mine.pdf", [paper_text("protein folding retrieval")])]))
        local = tmp_path / "local.jsonl"
        local.write_text(json.dumps({"id": "X1", "title": "Protein folding locally", "text": "Protein folding "
                                     "retrieval kept on this laptop."}) + "\n", encoding="utf-8")
        engine.add_datastore(local, "mine")
        engine.connect_datastore("lab", lab.reader_url())
        yield engine


def search(engine: Engine) -> tuple[list[SearchHit], list[str]]:
    notices: list[str] = []
    hits = engine.search(QUESTION, k=30, progress=lambda p: notices.append(p.label) if p.stage == "source" else None)
    return hits, notices


def test_everything_answers_while_the_server_is_up(member: Engine) -> None:
    hits, notices = search(member)
    assert {h.source for h in hits} == {"library", "mine", "lab"} and notices == []


def test_a_killed_server_mid_query_is_left_out_and_searched_again_after_restart(member: Engine, lab: PgServer,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    server = member.datastore_registry.server_source("lab")
    server.describe()  # connected before the table is locked
    result: dict[str, tuple[list[SearchHit], list[str]]] = {}
    admin = psycopg.connect(lab.url())  # its transaction holds the lock until the server dies
    admin.execute("LOCK TABLE quire.passages IN ACCESS EXCLUSIVE MODE")  # the member's next query waits
    worker = threading.Thread(target=lambda: result.setdefault("first", search(member)))
    worker.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not lab.admin(
            "SELECT 1 FROM pg_stat_activity WHERE usename = 'quire_reader' AND wait_event_type = 'Lock'"):
        time.sleep(0.05)
    lab.stop("immediate")  # killed while the query waits
    admin.close()
    worker.join(30)
    hits, notices = result["first"]
    assert {h.source for h in hits} == {"library", "mine"}
    [notice] = notices
    # The connection died with the server; connecting again finds none, or one the dying server closes.
    assert "'lab' was left out" in notice and ("cannot be reached" in notice or "closed the connection" in notice)
    lab.start()
    monkeypatch.setattr(server_source, "RETRY_AFTER_S", 0.0)  # the very next search may connect again
    hits, notices = search(member)
    assert {h.source for h in hits} == {"library", "mine", "lab"} and notices == []


def test_a_down_server_is_named_and_the_rest_answers(member: Engine, lab: PgServer) -> None:
    lab.stop("fast")
    try:
        hits, notices = search(member)
        assert {h.source for h in hits} == {"library", "mine"}
        assert len(notices) == 1 and "'lab'" in notices[0] and "cannot be reached" in notices[0]
        [info] = [i for i in member.datastores() if i.name == "lab"]
        assert info.state.startswith("unavailable: ") and "cannot be reached" in info.state
        assert any("'lab'" in problem for problem in member.doctor()["problems"])
    finally:
        lab.start()


def test_a_revoked_password_is_named(member: Engine, lab: PgServer) -> None:
    search(member)  # connected with the old password
    lab.admin("ALTER ROLE quire_reader PASSWORD 'changed-by-the-admin'")
    try:
        # The administrator ends the open sessions too; connecting again, the old password no longer works.
        lab.admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'quire_reader'")
        hits, notices = search(member)
        assert {h.source for h in hits} == {"library", "mine"}
        assert len(notices) == 1 and "'lab'" in notices[0] and "refused the password" in notices[0]
    finally:
        lab.admin("ALTER ROLE quire_reader PASSWORD 'reader-secret'")


def test_a_dropped_table_is_named(member: Engine, lab: PgServer) -> None:
    lab.admin("CREATE TABLE public.terms_kept AS SELECT * FROM quire.terms")
    lab.admin("DROP TABLE quire.terms")
    try:
        hits, notices = search(member)
        assert {h.source for h in hits} == {"library", "mine"}
        assert len(notices) == 1 and "'lab'" in notices[0] and "does not hold Quire's tables" in notices[0]
    finally:
        lab.admin("ALTER TABLE public.terms_kept SET SCHEMA quire")
        lab.admin("ALTER TABLE quire.terms_kept RENAME TO terms")
        lab.admin("GRANT SELECT ON quire.terms TO quire_reader")
