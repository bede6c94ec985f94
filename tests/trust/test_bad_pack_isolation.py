"""One bad pack must never break search: its contents are checked at install, and a datastore that
fails anyway (damaged after install, or installed before the check existed) is left out of a search
with a notice naming it, while the library and the healthy datastores answer; `doctor` reports it.

CI spot checks: none of these is slow (a pack of 30 records).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.datastore.manifest import PackError
from engine.progress import Progress
from tests.fixtures.pdfs import text_pdf
from tests.trust.test_datastore_faults import (
    _edited_database,
    make_engine,
    nothing_installed,
    quire,
    recrafted,
    repacked,
    write_jsonl,
)

DEEP_AUTHORS = "[" * 100_000 + "]" * 100_000
CONTENTLESS = "CREATE VIRTUAL TABLE passages_fts USING fts5(title, text, content = '', tokenize = 'porter unicode61')"
CRAFTS: dict[str, list[str]] = {
    "authors-nested-100000-deep": [f"UPDATE records SET authors = '{DEEP_AUTHORS}' WHERE rowid = 1"],
    "text-not-utf8": ["UPDATE passages SET text = CAST(X'C328FF6B65726E656C73' AS TEXT) || text WHERE rowid = 3"],
    "external-content-fts": ["DROP TABLE passages_fts", "CREATE VIRTUAL TABLE passages_fts USING fts5(title, text, "
                             "content = 'passages', tokenize = 'porter unicode61')"],
    "empty-search-index": ["DROP TABLE passages_fts", CONTENTLESS],
}
REASONS = {"authors-nested-100000-deep": "authors of record 'rec-0' are not a list of names",
           "text-not-utf8": "not UTF-8", "external-content-fts": "not a contentless FTS5 index",
           "empty-search-index": "search index holds 0 passages of 30"}


def edit(statements: list[str]) -> Callable[[bytes], bytes]:
    return lambda database: _edited_database(database, statements)


@pytest.mark.parametrize("craft", list(CRAFTS), ids=list(CRAFTS))
def test_a_pack_whose_contents_cannot_be_searched_is_refused_and_leaves_nothing(good_pack: Path, tmp_path: Path,
                                                                                craft: str) -> None:
    crafted = recrafted(good_pack, tmp_path / "crafted.quirepack", {"datastore.db": edit(CRAFTS[craft])})
    home = tmp_path / "user"
    done = quire(home, "datastore", "install", str(crafted), "--reembed", "--no-embed")
    assert done.returncode == 1, done.stderr
    assert REASONS[craft] in done.stderr and "Traceback" not in done.stderr
    assert nothing_installed(home), list((home / "datastores").iterdir())


def test_a_manifest_whose_passage_count_lies_is_refused(good_pack: Path, tmp_path: Path) -> None:
    crafted = repacked(good_pack, tmp_path / "crafted.quirepack",
                       lambda manifest: json.dumps({**manifest, "passage_count": 999}).encode())
    home = tmp_path / "user"
    with make_engine(home) as engine, pytest.raises(PackError, match="promises 999"):
        engine.install_datastore(crafted)
    assert nothing_installed(home)


def damage_installed(home: Path, name: str, statements: list[str]) -> None:
    """Change an installed datastore's database behind Quire's back (as a disk, or an older Quire, might have)."""
    conn = sqlite3.connect(home / "datastores" / name / "datastore.db")
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


HEALTHY = [{"id": f"other-{i}", "title": f"Protein folding note {i}",
            "text": f"Protein folding pathway {i} passes molten globule states."} for i in range(10)]
QUESTION = "graph kernels random walks molecules protein folding globule"


@pytest.fixture
def three_sources(good_pack: Path, tmp_path: Path) -> Path:
    """A home with a library paper, the pack installed as "graphs", and a healthy datastore on other records."""
    home = tmp_path / "user"
    paper = text_pdf(tmp_path / "walks.pdf", ["Molecules compared by graph kernels: random walks count the\n"
                                              "shared paths between two molecules.\n" * 8])
    with make_engine(home) as engine:
        assert [result.outcome.value for result in engine.add_documents([paper])] == ["added"]
        engine.install_datastore(good_pack, reembed=True)
        engine.add_datastore(write_jsonl(tmp_path / "more.jsonl", HEALTHY), "healthy", embed=False)
    return home


def test_a_broken_datastore_is_left_out_while_the_library_and_the_others_answer(three_sources: Path) -> None:
    home = three_sources
    # Every passage of "graphs" damaged behind Quire's back (a disk, or a pack installed before the check).
    damage_installed(home, "graphs", ["UPDATE passages SET text = CAST(X'C328FF' AS TEXT) || text"])
    notices: list[str] = []

    def listen(progress: Progress) -> None:
        if progress.stage == "source":
            notices.append(progress.label)

    with make_engine(home) as engine:
        hits = engine.search(QUESTION, k=40, rewrite=False, rerank="none", progress=listen)
        assert {hit.source for hit in hits} == {"library", "healthy"}
        assert len(notices) == 1 and "'graphs' was left out" in notices[0]
        problems = engine.doctor()["problems"]
        assert any("'graphs' cannot be searched" in problem for problem in problems), problems
    done = quire(home, "search", QUESTION, "--no-rewrite")
    assert done.returncode == 0, done.stderr
    assert "'graphs' was left out" in done.stderr and "Traceback" not in done.stderr
    doctor = quire(home, "doctor")
    assert "'graphs' cannot be searched" in doctor.stdout + doctor.stderr


def test_authors_nested_100000_deep_in_an_installed_datastore_do_not_break_search(three_sources: Path) -> None:
    home = three_sources
    damage_installed(home, "graphs", [f"UPDATE records SET authors = '{DEEP_AUTHORS}'"])
    with make_engine(home) as engine:
        hits = engine.search(QUESTION, k=40, rewrite=False, rerank="none")
    assert {hit.source for hit in hits} == {"library", "healthy", "graphs"}
    assert all(hit.bib.authors == () for hit in hits if hit.source == "graphs")
