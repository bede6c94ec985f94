"""Retrieval's pure parts: the safe FTS5 query builder, list fusion, and paper-level dedupe and
re-ordering (the grouping of a search's hits by paper, paper evidence, paper-local BM25).

No library here: each function gets the lists or texts it works on. Hybrid search over a real
library is in test_retrieve.py.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bibliography import Bibliography
from engine.cli.search_commands import print_grouped
from engine.errors import QueryError
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
from engine.retrieve.retriever import within_paper_query
from engine.retrieve.within_paper import local_bm25, reorder_within_papers
from engine.types import SearchHit

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
    return SearchHit(passage_id=passage_id, doc_id=doc_id, source=source,
                     bib=Bibliography(title, doi=doi, arxiv_id=arxiv_id), text=text or passage_id)


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


def test_a_question_about_funding_orders_a_papers_passages_by_the_words_back_matter_uses() -> None:
    # "Who funded ...?" shares no word with "This work was supported by NIH grant R01": within the paper,
    # "supported" and "grant" are rare, so the acknowledgements rise among its passages.
    texts = ["SPECTER embeds papers with a Transformer trained on citations", "SPECTER is trained on triplets",
             "SPECTER is evaluated on SciDocs", "This work was supported in part by ONR grant N00014"]
    plain = local_bm25(build_fts_query("Who funded the work on SPECTER?"), texts)
    asked = local_bm25(within_paper_query("Who funded the work on SPECTER?"), texts)
    assert plain.index(max(plain)) != 3 and asked.index(max(asked)) == 3
    assert within_paper_query("How is SPECTER trained?") == build_fts_query("How is SPECTER trained?")



def test_a_question_about_availability_orders_a_papers_passages_by_the_words_such_statements_use() -> None:
    # "Where can I get the S2ORC data?" shares only "data" and "S2ORC" with the footnote that answers it; within the
    # paper "available" and "github" are rare, so that passage rises among its passages.
    texts = ["S2ORC is a corpus of 81.1M papers built from data of Semantic Scholar",
             "We release S2ORC data in JSON with full text parses",
             "S2ORC data cover many disciplines; data quality filters remove papers",
             "Instructions for access to the data and model are available at https://github.com/allenai/s2orc/."]
    plain = local_bm25(build_fts_query("Where can I get the S2ORC data?"), texts)
    asked = local_bm25(within_paper_query("Where can I get the S2ORC data?"), texts)
    assert plain.index(max(plain)) != 3 and asked.index(max(asked)) == 3
