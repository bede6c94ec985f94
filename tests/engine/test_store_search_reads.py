"""The catalog as search reads it (engine.store.search_reads): read-only, scoped to papers, blind to
removed ones, and the same rows the library search source used to query itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf

from engine.errors import StoreError
from engine.service import Engine
from engine.store.search_reads import SearchReads


@pytest.fixture
def two_papers(engine: Engine, tmp_path: Path) -> tuple[str, str]:
    ids = []
    for name, topic in (("corona.pdf", "protein corona on lipid nanoparticles"),
                        ("optics.pdf", "optomechanical coupling in silicon resonators")):
        result = next(iter(engine.add_documents([text_pdf(tmp_path / name, [paper_text(topic, 4)])])))
        assert result.doc_id, result
        ids.append(result.doc_id)
    return ids[0], ids[1]


def test_lexical_search_is_scoped_to_the_papers_named(engine: Engine, two_papers: tuple[str, str]) -> None:
    corona, optics = two_papers
    reads = SearchReads(engine.paths.catalog)
    try:
        everywhere = reads.lexical('"corona"', "bm25(passages_fts)", 10)
        assert everywhere  # found, best first
        assert [score for _, score in everywhere] == sorted((score for _, score in everywhere), reverse=True)
        assert reads.lexical('"corona"', "bm25(passages_fts)", 10, doc_ids=[optics]) == []
        hits = reads.hits([pid for pid, _ in everywhere])
        assert {h.doc_id for h in hits} == {corona} and all(h.source == "library" for h in hits)
        assert {pid for pid, _ in reads.searchable([corona])} >= {pid for pid, _ in everywhere}
    finally:
        reads.close()


def test_a_removed_paper_is_gone_from_what_search_reads(engine: Engine, two_papers: tuple[str, str]) -> None:
    corona, _ = two_papers
    reads = SearchReads(engine.paths.catalog)
    try:
        passage_ids = [pid for pid, _ in reads.searchable([corona])]
        assert reads.existing(passage_ids) == set(passage_ids)
        engine.remove(corona)
        assert reads.existing(passage_ids) == set() and reads.hits(passage_ids) == []
        assert corona not in {paper.doc_id for paper in reads.papers()}
    finally:
        reads.close()


def test_search_never_writes_to_the_catalog(engine: Engine, two_papers: tuple[str, str]) -> None:
    reads = SearchReads(engine.paths.catalog)
    try:
        with pytest.raises(StoreError, match="quire doctor"):
            reads.query("DELETE FROM passages")
        assert reads.searchable()
    finally:
        reads.close()
