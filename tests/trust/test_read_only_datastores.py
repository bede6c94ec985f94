"""Datastore commands on a read-only library: a clear refusal, never an OSError traceback from the
lock file; and searching a read-only library that holds only datastores (no saved vector index).

The library is under a real read-only mount in a private mount namespace (permission bits stop
nothing for root); skipped where the kernel allows no mount namespace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trust.test_settings_faults import _read_only, quire


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("read-only")
    records = folder / "records.jsonl"
    records.write_text("".join(json.dumps({"id": f"r{i}", "title": f"Lexical retrieval {i}",
                                           "text": "Lexical retrieval scales to millions of passages. " * 4}) + "\n"
                               for i in range(5)))
    home = folder / "home"
    assert quire(home, "datastore", "add", str(records), "--name", "notes", "--no-embed").returncode == 0
    return home


@pytest.mark.parametrize("args", [("datastore", "add", "RECORDS", "--name", "other", "--no-embed"),
                                  ("datastore", "remove", "notes"), ("datastore", "embed", "notes"),
                                  ("datastore", "install", "PACK")], ids=["add", "remove", "embed", "install"])
def test_changing_a_datastore_of_a_read_only_library_is_refused_clearly(home: Path, args: tuple[str, ...]) -> None:
    pack = home.parent / "notes.quirepack"
    if not pack.exists():
        assert quire(home, "datastore", "pack", "notes", str(pack)).returncode == 0
    args = tuple({"RECORDS": str(home.parent / "records.jsonl"), "PACK": str(pack)}.get(a, a) for a in args)
    before = sorted(p.relative_to(home).as_posix() for p in home.rglob("*"))
    extra = ["--replace", "--reembed", "--no-embed"] if "install" in args else []
    done = quire(home, *args, *extra, prefix=_read_only(home))
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert "is read-only" in done.stderr and "nothing is damaged" in done.stderr, done.stderr
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == before


def test_a_read_only_library_of_datastores_only_is_searched(home: Path) -> None:
    done = quire(home, "search", "lexical retrieval", "--json", prefix=_read_only(home))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "WARNING" not in done.stderr, done.stderr
    assert {hit["source"] for hit in json.loads(done.stdout)} == {"notes"}


def test_a_datastores_folder_quire_may_not_read_leaves_the_library_searchable(tmp_path: Path) -> None:
    from fixtures.pdfs import paper_text, text_pdf

    from trust.test_discovery_faults import _bound_by_permissions

    home = tmp_path / "home"
    paper = text_pdf(tmp_path / "lexical.pdf", [paper_text("lexical retrieval", paragraphs=2)])
    assert quire(home, "ingest", "--no-embed", str(paper)).returncode == 0
    (home / "datastores").mkdir()
    (home / "datastores").chmod(0)
    try:
        done = quire(home, "search", "lexical retrieval", "--json", prefix=_bound_by_permissions())
    finally:
        (home / "datastores").chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "may not read its datastores folder" in done.stderr, done.stderr
    assert {hit["source"] for hit in json.loads(done.stdout)} == {"library"}


def test_an_embedding_cache_quire_may_not_read_leaves_search_working(tmp_path: Path) -> None:
    from fixtures.pdfs import paper_text, text_pdf

    from trust.test_discovery_faults import _bound_by_permissions

    home = tmp_path / "home"
    paper = text_pdf(tmp_path / "lexical.pdf", [paper_text("lexical retrieval", paragraphs=2)])
    assert quire(home, "ingest", str(paper)).returncode == 0  # embedded: the cache exists
    cache = home / "embeddings.db"
    cache.chmod(0)
    try:
        done = quire(home, "search", "lexical retrieval", "--json", prefix=_bound_by_permissions())
    finally:
        cache.chmod(0o644)
    assert done.returncode == 0, done.stderr  # before: "its folder is read-only" (it is not), exit 1
    assert "may not read the embedding cache" in done.stderr and "read-only" not in done.stderr, done.stderr
    assert {hit["source"] for hit in json.loads(done.stdout)} == {"library"}
