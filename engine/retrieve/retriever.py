"""Hybrid retrieval over every source: BM25 + dense, fused by score (or RRF), reranked, deduplicated.

For one question the retriever

0. adds corrections of misspelled words the sources do not hold (engine.retrieve.spelling);
1. builds a safe FTS5 query from the question (and from each LM rewrite, when rewriting is on);
2. embeds the question once and hands the vector to every source's ``dense``;
3. merges each retriever's lists across sources by score (BM25 and cosine scores are comparable
   across sources; ranks within a tiny library are not comparable with ranks in a big datastore);
4. adds two feedback lists made from the best first-round passages: BM25 for the question plus
   words those passages share (RM3-style), and dense search from the question vector moved toward
   theirs (Rocchio);
5. fuses the retrievers' merged lists: weighted z-scores of their scores (or reciprocal rank fusion);
6. lets each candidate gain from the best other candidate of its paper (paper evidence), orders
   each paper's candidates by BM25 counted within the paper as well (within_paper.py), then
   reranks the best candidates when a reranker is set;
7. makes a paper found in the library and a datastore one paper (the library copy wins) and
   collapses near-identical passages; ``per_paper`` (off for a search list, on when choosing the
   passages an answer is written from) keeps at most that many passages of one paper.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TypeVar

import faiss
import numpy as np

from engine.embed import Embedder, embed_queries
from engine.errors import Cancelled, DatastoreUnavailableError, EngineError
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.protocols import NoReranker, Reranker
from engine.retrieve.dedupe import (
    cap_per_paper,
    collapse_near_duplicates,
    paper_keys,
    prefer_library,
    with_paper_evidence,
)
from engine.retrieve.feedback import expansion_terms
from engine.retrieve.fts import any_of, build_fts_query, check_query, query_terms
from engine.retrieve.fusion import merge_by_score, ranks_of, reciprocal_rank_fusion, score_fusion
from engine.retrieve.rewrite import QueryRewriter
from engine.retrieve.source import PassageSource, ScoredId
from engine.retrieve.spelling import SpellingCorrector, with_corrections
from engine.retrieve.within_paper import reorder_within_papers
from engine.text.back_matter import (
    AVAILABILITY_WORDS,
    BACK_MATTER_WORDS,
    asks_about_availability,
    asks_about_back_matter,
)
from engine.tuning import RETRIEVAL
from engine.types import LIBRARY_SOURCE, SearchHit

log = logging.getLogger(__name__)

_SEP = "\x1f"  # joins source name and passage id into one key: ids are unique only within a source
_T = TypeVar("_T")


def within_paper_query(query: str) -> str:
    """The FTS query that orders a paper's own passages: the question's words, and for a question about funding,
    thanks or authorship the words back matter is written in, rare within a paper ("supported", "grant"), so
    that its acknowledgements rise among its passages (measured: benchmarks/back_matter_search.py); for one about
    where its data or code can be had, the words of a statement of availability ("available", "github",
    "deposited"; benchmarks/availability_questions.py)."""
    written_in: tuple[str, ...]
    if asks_about_availability(query):
        written_in = AVAILABILITY_WORDS
    elif asks_about_back_matter(query):
        written_in = BACK_MATTER_WORDS
    else:
        return build_fts_query(query)
    return any_of(dict.fromkeys([*query_terms(query), *written_in]))


@dataclass(frozen=True)
class RetrievalOptions:
    """The knobs of one search; the measured defaults come from :data:`engine.tuning.RETRIEVAL` (with their origin)."""

    candidates: int = RETRIEVAL.candidates  # passages each retriever returns per source
    rrf_k: float = RETRIEVAL.rrf_k
    weights: Mapping[str, float] = field(default_factory=lambda: {
        "bm25": RETRIEVAL.bm25_weight, "dense": RETRIEVAL.dense_weight, "rewrite": RETRIEVAL.rewrite_weight,
        "feedback": RETRIEVAL.feedback_weight, "dense_feedback": RETRIEVAL.dense_feedback_list_weight})
    # At most this many passages of one paper (0: no cap). A search list is not capped: when a
    # question is about one paper, its answer is often that paper's fourth-best passage, and a
    # cap replaced it with other papers' weaker ones (LitQA2 full text, docs/history/retrieval.md).
    # `quire search --per-paper N` asks for a cap; answers apply their own (SYNTHESIS.per_paper).
    per_paper: int = 0
    rerank_depth: int = RETRIEVAL.rerank_depth
    lexical: bool = True
    dense: bool = True
    # BM25 (RM3-style) and dense (Rocchio) pseudo-relevance feedback from the best first-round passages.
    feedback_passages: int = RETRIEVAL.feedback_passages
    feedback_terms: int = RETRIEVAL.feedback_terms
    dense_feedback_passages: int = RETRIEVAL.dense_feedback_passages
    dense_feedback_weight: float = RETRIEVAL.dense_feedback_weight
    fusion: str = RETRIEVAL.fusion  # "zscore" / "minmax" (fusion.score_fusion) or "rrf" (rrf_k)
    # Correct misspelled question words against the sources' vocabularies (engine.retrieve.spelling).
    spelling: bool = True
    paper_evidence: float = RETRIEVAL.paper_evidence  # dedupe.with_paper_evidence
    within_paper: float = RETRIEVAL.within_paper  # within_paper.py


def _key(source: str, passage_id: str) -> str:
    return f"{source}{_SEP}{passage_id}"


def _split(key: str) -> tuple[str, str]:
    source, _, passage_id = key.partition(_SEP)
    return source, passage_id


def _by_source(keys: Iterable[str]) -> dict[str, list[str]]:
    """Source-qualified keys grouped as passage ids per source name, in order."""
    wanted: dict[str, list[str]] = {}
    for key in keys:
        source_name, passage_id = _split(key)
        wanted.setdefault(source_name, []).append(passage_id)
    return wanted


class Retriever:
    """Searches a fixed list of sources with one embedder (the one their indexes were built with)."""

    def __init__(self, sources: Sequence[PassageSource], embedder: Embedder | None,
                 rewriter: QueryRewriter | None = None, reranker: Reranker | None = None,
                 options: RetrievalOptions | None = None) -> None:
        self.sources = list(sources)
        self.embedder = embedder
        self.rewriter = rewriter
        self.reranker = reranker or NoReranker()
        self.options = options or RetrievalOptions()
        self.speller = SpellingCorrector(self.sources)
        self.left_out: dict[str, str] = {}  # datastores that failed during this search, with why
        self._report: ProgressCallback = no_progress

    def search(self, query: str, k: int = 10, doc_ids: Collection[str] | None = None,
               progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> list[SearchHit]:
        """The ``k`` best passages for ``query`` across all sources, best first."""
        query = check_query(query)
        if k <= 0:
            return []
        self._report = progress
        options = self.options
        scope = set(doc_ids) if doc_ids is not None else None
        rewrites: list[str] = []
        if self.rewriter is not None:
            progress(Progress("search", 0, 3, "rewriting the question"))
            rewrites = self.rewriter.rewrite(query, cancel)
        _check(cancel)
        corrections = self.speller.corrections(query) if options.spelling else {}
        if corrections:
            progress(Progress("spelling", 1, 1, "also searching for " + ", ".join(
                f"'{fixed}' (typed '{typed}')" for typed, fixed in corrections.items())))
        progress(Progress("search", 1, 3, "searching"))
        # Every retriever (and the reranker) reads the typed words and their corrections: BM25 then
        # matches either, and the embedder sees both (dev nDCG@10 0.621, against 0.619 with the typed
        # words replaced; docs/history/retrieval.md).
        query = with_corrections(query, corrections)
        lists = self.ranked_lists(query, rewrites, scope, cancel)
        fused = self.fuse(lists)
        ranks = ranks_of(lists)
        # Enough candidates to survive per-paper capping and duplicate collapsing.
        depth = max(options.rerank_depth if not isinstance(self.reranker, NoReranker) else 0, 4 * k, 20)
        hits = with_paper_evidence(self._resolve(fused[:depth], ranks), options.paper_evidence)
        hits = reorder_within_papers(hits, within_paper_query(query), options.within_paper)
        _check(cancel)
        if not isinstance(self.reranker, NoReranker) and hits:
            progress(Progress("search", 2, 3, f"reranking with {self.reranker.name}"))
            hits = self.reranker.rerank(query, hits[:options.rerank_depth], cancel) + hits[options.rerank_depth:]
        hits = self._substitute_library_copies(query, hits, scope)
        hits = prefer_library(hits)
        hits = collapse_near_duplicates(hits)
        hits = cap_per_paper(hits, options.per_paper)
        progress(Progress("search", 3, 3, f"{min(k, len(hits))} passages"))
        return hits[:k]

    def ranked_lists(self, query: str, rewrites: Sequence[str], scope: Collection[str] | None,
                     cancel: CancelToken | None = None) -> dict[str, list[ScoredId]]:
        """Each retriever's ranking (keys are source-qualified passage ids), merged over the sources."""
        options = self.options
        lists: dict[str, list[ScoredId]] = {}
        n = options.candidates
        embedding: Future[np.ndarray] | None = None
        if options.dense and self.embedder is not None:
            # Embed the question on a helper thread while SQLite runs BM25 here: torch and SQLite
            # both release the GIL, so the two (each ~10-30 ms on a laptop CPU) overlap.
            embedding = _query_embedding_pool.submit(embed_queries, self.embedder, [query])
        try:
            if options.lexical:
                lists["bm25"] = self._lexical(build_fts_query(query), n, scope)
                for number, rewrite in enumerate(rewrites, start=1):
                    _check(cancel)
                    lists[f"rewrite{number}"] = self._lexical(build_fts_query(rewrite), n, scope)
        except BaseException:
            if embedding is not None:
                embedding.cancel()  # the BM25 error (or Cancelled) is the one to report
            raise
        vectors = embedding.result() if embedding is not None else None
        if vectors is not None:
            _check(cancel)
            lists["dense"] = self._dense(vectors[0], n, scope)
        if options.lexical and options.feedback_passages > 0:
            _check(cancel)
            lists["feedback"] = self._feedback(query, lists, scope)
        if vectors is not None and options.dense_feedback_passages > 0:
            _check(cancel)
            lists["dense_feedback"] = self._dense_feedback(vectors[0], lists, scope)
        return lists

    def _feedback(self, query: str, lists: Mapping[str, Sequence[ScoredId]],
                  scope: Collection[str] | None) -> list[ScoredId]:
        """BM25 for the question expanded with words its best first-round passages share (RM3-style)."""
        options = self.options
        first = self.fuse(lists)[:options.feedback_passages]
        texts = [hit.search_text for hit in self._resolve(first, {})]
        terms = query_terms(query)
        extra = expansion_terms(texts, terms, options.feedback_terms)
        if not extra:
            return []
        expanded = any_of([*terms, *extra])
        return self._lexical(expanded, options.candidates, scope)

    def _dense_feedback(self, query_vector: np.ndarray, lists: Mapping[str, Sequence[ScoredId]],
                        scope: Collection[str] | None) -> list[ScoredId]:
        """Dense search for the question's vector moved toward its best first-round passages' vectors."""
        options = self.options
        first = [key for key, _ in self.fuse(lists)[:options.dense_feedback_passages]]
        found = self._stored_vectors(first)
        if not found:
            return []
        moved = np.asarray(query_vector, dtype=np.float32) + options.dense_feedback_weight * np.mean(found, axis=0)
        norm = float(np.linalg.norm(moved))
        if norm == 0.0:
            return []
        return self._dense(moved / norm, options.candidates, scope)

    def _stored_vectors(self, keys: Sequence[str]) -> list[np.ndarray]:
        """The stored vectors of these passages (source-qualified keys) that have one."""
        wanted = _by_source(keys)
        found: list[np.ndarray] = []
        for source in self.sources:
            if source.name in wanted:
                try:
                    found += source.vectors(wanted[source.name]).values()
                except (EngineError, sqlite3.DatabaseError) as exc:  # a damaged cache: search on without it
                    log.warning("dense feedback skipped for %s: %s", source.name, exc)
        return found

    def fuse(self, lists: Mapping[str, Sequence[ScoredId]]) -> list[ScoredId]:
        """The retrievers' lists as one ranking, by the configured fusion."""
        options = self.options
        if options.fusion == "rrf":
            return reciprocal_rank_fusion(lists, options.rrf_k, options.weights)
        return score_fusion(lists, options.weights, options.fusion)

    def _answer(self, source: PassageSource, call: Callable[[], list[_T]]) -> list[_T]:
        """``call()`` on ``source``; a datastore that fails is left out of the rest of this search (and gives []).

        One damaged datastore (whatever it raises: a database error, bad text, a runaway value) must
        not take the library and the other datastores down with it; the library's own errors are
        real failures of the search and are raised.
        """
        if source.name == LIBRARY_SOURCE:
            return call()
        try:
            return call()
        except Cancelled:
            raise
        except Exception as exc:  # any failure of one datastore is isolated (see above)
            reason = str(exc) or type(exc).__name__
            if len(reason) > 300:
                reason = reason[:297] + "..."
            self.left_out[source.name] = reason
            if source in self.sources:
                self.sources.remove(source)  # the speller shares this list
            log.warning("datastore %s left out of this search: %s", source.name, reason)
            self._report(Progress("source", 1, 1, f"the datastore {source.name!r} was left out of this search "
                                  f"because it failed ({reason}); `quire doctor` checks it, and `quire datastore "
                                  f"remove {source.name}` removes it"))
            return []

    def _lexical(self, fts_query: str, n: int, scope: Collection[str] | None) -> list[ScoredId]:
        per_source = [[(_key(s.name, pid), score) for pid, score in self._answer(
                       s, partial(s.lexical, fts_query, n, scope))] for s in list(self.sources)]
        return merge_by_score(per_source, n)

    def _dense(self, vector: np.ndarray, n: int, scope: Collection[str] | None) -> list[ScoredId]:
        per_source = []
        for source in list(self.sources):
            found = self._answer(source, partial(self._dense_of, source, vector, n, scope))
            per_source.append([(_key(source.name, pid), score) for pid, score in found])
        return merge_by_score(per_source, n)

    @staticmethod
    def _dense_of(source: PassageSource, vector: np.ndarray, n: int, scope: Collection[str] | None) -> list[ScoredId]:
        try:
            with single_threaded_faiss():
                return source.dense(vector, n, scope)
        except (Cancelled, DatastoreUnavailableError):  # a server that fails is left out, not only its dense list
            raise
        except EngineError as exc:
            # A source whose index cannot serve this model (being rebuilt, another model) still
            # answers by BM25; say so in the log rather than failing the whole search.
            log.warning("dense search skipped for %s: %s", source.name, exc)
            return []

    def _resolve(self, fused: Sequence[ScoredId], ranks: Mapping[str, Mapping[str, int]]) -> list[SearchHit]:
        """SearchHits for fused keys, in fused order, with their fused score and per-retriever ranks."""
        wanted = _by_source(key for key, _ in fused)
        found: dict[str, SearchHit] = {}
        for source in list(self.sources):
            if source.name in wanted:
                for hit in self._answer(source, partial(source.hits, wanted[source.name])):
                    found[_key(source.name, hit.passage_id)] = hit
        hits = []
        for key, score in fused:
            resolved = found.get(key)
            if resolved is not None:
                hit_ranks = tuple(sorted(ranks.get(key, {}).items(), key=lambda item: item[1]))
                hits.append(replace(resolved, score=score, ranks=hit_ranks))
        return hits

    def _substitute_library_copies(self, query: str, hits: list[SearchHit],
                                   scope: Collection[str] | None) -> list[SearchHit]:
        """A datastore hit on a paper the library holds becomes that library paper's best passage.

        The library copy has pages and boxes to cite; when its own passages already ranked, the
        datastore hit is simply dropped later by ``prefer_library``.
        """
        library = next((s for s in self.sources if s.name == LIBRARY_SOURCE), None)
        papers = getattr(library, "papers", None)
        if library is None or papers is None or all(h.is_library for h in hits):
            return hits
        owner: dict[str, str] = {}
        for paper in papers():
            for key in paper_keys(paper):
                if not key.startswith("doc:"):
                    owner.setdefault(key, paper.doc_id)
        if not owner:
            return hits
        ranked_docs = {h.doc_id for h in hits if h.is_library}
        result: list[SearchHit] = []
        for hit in hits:
            doc_id = None if hit.is_library else next(
                (owner[key] for key in sorted(paper_keys(hit)) if key in owner), None)
            if doc_id is None or doc_id in ranked_docs or (scope is not None and doc_id not in scope):
                result.append(hit)
                continue
            best = library.lexical(build_fts_query(query), 1, [doc_id])
            replacement = library.hits([best[0][0]]) if best else []
            if replacement:
                result.append(replace(replacement[0], score=hit.score, ranks=hit.ranks))
                ranked_docs.add(doc_id)
            else:
                result.append(hit)
        return result


# One thread is enough: searches take turns on the embedder anyway (one model, one lock).
_query_embedding_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="quire-query-embed")
_faiss_threads_lock = threading.Lock()


@contextmanager
def single_threaded_faiss() -> Iterator[None]:
    """Run one query's FAISS search on one OpenMP thread.

    A single query gains nothing from threads, and on a busy machine OpenMP's spinning workers
    make it hundreds of times slower (0.6 ms vs 245 ms for 10k vectors on the loaded 2-core dev
    machine). Builds and batch searches elsewhere keep FAISS's default.
    """
    with _faiss_threads_lock:
        before = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            yield
        finally:
            faiss.omp_set_num_threads(before)


def _check(cancel: CancelToken | None) -> None:
    if cancel is not None:
        cancel.check()
