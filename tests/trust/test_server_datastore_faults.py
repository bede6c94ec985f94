"""A lab's PostgreSQL datastore failing under a running session: the server killed while a search waits on
it, the reader's permissions revoked between two searches, rows far larger than any datastore writes.

Each search still answers from the library (and the datastores that work), names the one left out and
why, loses nothing, and uses the server again once it is back. The server is a real PostgreSQL +
pgvector (``fixtures.pg_server``); the faults are made on it with its own tools (``pg_ctl stop -m
immediate``, ``REVOKE``, ``UPDATE``), never by patching Quire.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf
from fixtures.pg_server import READER, PgServer

from engine.embed import HashingEmbedder
from engine.service import Engine

pytestmark = pytest.mark.slow  # a real PostgreSQL server


def records() -> list[dict[str, object]]:
    return [{"id": f"P{n}", "title": f"Protein folding paper {n}", "text": f"We study protein folding with "
             f"method {n}. Folding energy landscapes guide the search {n}."} for n in range(30)]


@pytest.fixture(scope="module")
def published(pg_server: PgServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    folder = tmp_path_factory.mktemp("publisher")
    path = folder / "lab.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records()), encoding="utf-8")
    with Engine(home=folder / "home") as engine:
        engine.embedder = HashingEmbedder()
        engine.add_datastore(path, "lab")
        engine.publish_datastore("lab", pg_server.url(), reader=READER)
        yield engine


@pytest.fixture
def member(published: Engine, pg_server: PgServer, tmp_path: Path) -> Iterator[Engine]:
    """A lab member's library (one paper about protein folding) connected to the server datastore."""
    with Engine(home=tmp_path / "member") as engine:
        engine.embedder = HashingEmbedder()
        list(engine.add_documents([text_pdf(tmp_path / "own.pdf", [paper_text("protein folding")])]))
        engine.connect_datastore("lab", pg_server.reader_url(), timeout_s=20)
        yield engine


def sources(engine: Engine, query: str = "protein folding") -> tuple[set[str], list[str]]:
    notices: list[str] = []
    hits = engine.search(query, k=10, progress=lambda p: notices.append(p.label))
    return {hit.source for hit in hits}, notices


def test_the_server_killed_while_a_search_waits_on_it(published: Engine, member: Engine,
                                                     pg_server: PgServer) -> None:
    import psycopg

    assert sources(member)[0] == {"library", "lab"}
    result: dict[str, object] = {}

    def search() -> None:
        result["sources"], result["notices"] = sources(member)

    admin = psycopg.connect(pg_server.url())  # the search's query waits on this lock
    admin.execute("LOCK TABLE quire.passages IN ACCESS EXCLUSIVE MODE")
    searching = threading.Thread(target=search)
    searching.start()
    time.sleep(1.0)
    assert searching.is_alive(), "the search did not wait on the server"
    try:
        pg_server.stop("immediate")  # as a crash or a power cut: no goodbye to the clients
    finally:
        searching.join(timeout=60)
        admin.close()
    assert not searching.is_alive(), "the search hung on a dead server"
    try:
        assert result["sources"] == {"library"}
        assert any("'lab' was left out" in str(n) for n in result["notices"]), result["notices"]  # type: ignore[attr-defined]
    finally:
        pg_server.start()
    assert member.document(member.documents()[0].id).passage_count > 0  # the library lost nothing
    deadline = time.monotonic() + 60  # a failed server is retried after a pause, not at every search
    while sources(member)[0] != {"library", "lab"} and time.monotonic() < deadline:
        time.sleep(1.0)
    assert sources(member)[0] == {"library", "lab"}


def test_permissions_revoked_mid_session(published: Engine, member: Engine, pg_server: PgServer) -> None:
    assert sources(member)[0] == {"library", "lab"}
    pg_server.admin(f"REVOKE SELECT ON ALL TABLES IN SCHEMA quire FROM {READER}")
    try:
        found, notices = sources(member)
        assert found == {"library"}
        left_out = [n for n in notices if "'lab' was left out" in n]
        assert left_out and "permission denied" in left_out[0], notices
    finally:
        pg_server.admin(f"GRANT SELECT ON ALL TABLES IN SCHEMA quire TO {READER}")
    deadline = time.monotonic() + 60
    while sources(member)[0] != {"library", "lab"} and time.monotonic() < deadline:
        time.sleep(1.0)
    assert sources(member)[0] == {"library", "lab"}


def test_rows_far_larger_than_a_datastore_writes(published: Engine, member: Engine, pg_server: PgServer) -> None:
    """A passage of 64 MB and a title of 8 MB (a damaged or hostile server): the hit is shown cut to a
    bounded length, nothing holds the whole row."""
    pg_server.admin("UPDATE quire.passages SET text = text || repeat(' folding', 8000000) WHERE ordinal = 0 AND "
                    "record_rowid = (SELECT rowid FROM quire.records WHERE id = 'P3')")
    pg_server.admin("UPDATE quire.records SET title = repeat('Protein ', 1000000) WHERE id = 'P3'")
    try:
        hits = member.search("protein folding method 3", k=20)
        from_lab = [hit for hit in hits if hit.source == "lab"]
        assert from_lab, hits
        assert all(len(hit.text) <= 100_000 and len(hit.bib.title or "") <= 10_000 for hit in from_lab)
        assert any(hit.doc_id == "P3" for hit in from_lab)
    finally:
        pg_server.admin("UPDATE quire.passages SET text = left(text, 200) WHERE record_rowid = "
                        "(SELECT rowid FROM quire.records WHERE id = 'P3')")
        pg_server.admin("UPDATE quire.records SET title = 'Protein folding paper 3' WHERE id = 'P3'")
