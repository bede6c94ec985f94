"""The library as a :class:`~engine.retrieve.source.PassageSource`: FTS5 BM25 plus a FAISS index.

BM25 works the moment a document's text is stored (the catalog writes its FTS rows in the same
transaction). Dense search covers whatever :meth:`LibrarySource.embed_pending` has embedded so
far: it embeds the passages missing from the vector index through the embedding cache (so a
cancelled or crashed run resumes without recomputing) and saves the index as it goes.

The catalog is read through engine.store.search_reads (its own read connection; reference-list
passages are left out of search there).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

import numpy as np

from engine.embed import Embedder, EmbeddingCache
from engine.errors import IndexCorruptError
from engine.index import load_index, open_or_rebuild
from engine.index.faiss_index import FaissIndex
from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.retrieve.embedding import EMBED_STEP, embed_into_index
from engine.retrieve.fts import CommonTerms, bm25_expression
from engine.retrieve.source import ScoredId
from engine.store.search_reads import SearchReads
from engine.types import LIBRARY_SOURCE, Passage, SearchHit

log = logging.getLogger(__name__)



class LibrarySource:
    """Search over the library catalog (``library.db``) and its vector index file."""

    def __init__(self, catalog_path: Path, index_path: Path, cache: EmbeddingCache, embedder: Embedder) -> None:
        self.catalog_path = catalog_path
        self.index_path = index_path
        self.cache = cache
        self.embedder = embedder
        self._reads = SearchReads(catalog_path)
        self._lock = threading.RLock()
        self._common_terms = CommonTerms(self._reads.vocabulary)
        self._index: FaissIndex | None = None
        self._embed_lock = threading.Lock()

    @property
    def name(self) -> str:
        return LIBRARY_SOURCE

    def close(self) -> None:
        self._reads.close()

    # --- lexical ------------------------------------------------------------------------

    def lexical(self, fts_query: str, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        """BM25 (title and text columns weighted as in :mod:`engine.retrieve.fts`), best first."""
        if k <= 0 or not fts_query:
            return []
        return self._reads.lexical(self._common_terms.prune(fts_query), bm25_expression("passages_fts"), k, doc_ids)

    def stem_frequencies(self, low: str, high: str) -> dict[str, int]:
        """Indexed stems in [low, high) with their passage counts (see PassageSource)."""
        return self._reads.vocabulary.stems_between(low, high)

    # --- dense --------------------------------------------------------------------------

    def index(self, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> FaissIndex:
        """The vector index, loaded on first use; rebuilt from cached vectors when missing or damaged."""
        with self._lock:
            if self._index is None:
                model_id = self.embedder.model_id
                try:
                    # The model id alone identifies the vectors: no need to load the model to open its index.
                    self._index = load_index(self.index_path, model_id=model_id)
                except (FileNotFoundError, IndexCorruptError):
                    self._index = open_or_rebuild(self.index_path, model_id, self.embedder.dimension,
                                                  self._cached_vectors, progress, cancel)
            return self._index

    def has_vectors(self) -> bool:
        """Whether anything is embedded yet (cheap: no model or index is loaded to answer).

        An embedding run killed before its first index save leaves no index file but its vectors in the
        cache; the index is rebuilt from them on first use, so they count.
        """
        with self._lock:
            if self._index is not None:
                return len(self._index) > 0
        return self.index_path.exists() or self.cache.count() > 0

    def embedded_count(self) -> int:
        """How many searchable passages have a vector kept, in the index or only in the cache (what a stopped
        or killed run computed is there): the library's status, without loading a model or the index."""
        hashes = [content_hash for _, content_hash in self._searchable_rows()]
        return self.cache.count_among(self.embedder.model_id, hashes)

    def _cached_vectors(self) -> Iterator[tuple[list[str], np.ndarray]]:
        """(passage ids, vectors) of library passages whose vectors the cache holds, in batches."""
        model_id = self.embedder.model_id
        rows = self._searchable_rows()
        for start in range(0, len(rows), 2048):
            chunk = rows[start:start + 2048]
            found = self.cache.get_many(model_id, (content_hash for _, content_hash in chunk))
            kept = [(pid, found[h]) for pid, h in chunk if h in found]
            if kept:
                yield [pid for pid, _ in kept], np.stack([v for _, v in kept])

    def _searchable_rows(self, doc_ids: Collection[str] | None = None) -> list[tuple[str, str]]:
        return self._reads.searchable(doc_ids)

    def dense(self, query_vector: np.ndarray, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        """Nearest embedded passages by cosine; a ``doc_ids`` scope is searched exactly from the cache."""
        if k <= 0:
            return []
        if doc_ids is not None:
            return self._dense_within(query_vector, k, doc_ids)
        index = self.index()
        # Ask for a few more: a removed document's vectors stay in the index until embed_pending prunes them.
        hits = index.search(query_vector, k + 16)
        if not hits:
            return []
        live = self._existing_ids([pid for pid, _ in hits])
        return [(pid, score) for pid, score in hits if pid in live][:k]

    def vectors(self, passage_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of these passages under the current embedder (read from the cache, exact)."""
        rows = self._reads.content_hashes(passage_ids)
        found = self.cache.get_many(self.embedder.model_id, (h for _, h in rows))
        return {pid: found[h] for pid, h in rows if h in found}

    def _dense_within(self, query_vector: np.ndarray, k: int, doc_ids: Collection[str]) -> list[ScoredId]:
        rows = self._searchable_rows(doc_ids)
        found = self.cache.get_many(self.embedder.model_id, (h for _, h in rows))
        kept = [(pid, found[h]) for pid, h in rows if h in found]
        if not kept:
            return []
        matrix = np.stack([v for _, v in kept])
        scores = matrix @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
        order = np.argsort(-scores, kind="stable")[:k]
        return [(kept[i][0], float(scores[i])) for i in order]

    def _existing_ids(self, passage_ids: Sequence[str]) -> set[str]:
        return self._reads.existing(passage_ids)

    # --- hits ---------------------------------------------------------------------------

    def hits(self, passage_ids: Sequence[str]) -> list[SearchHit]:
        """The passages as SearchHits (score 0) in the given order; unknown ids are skipped."""
        return self._reads.hits(passage_ids)

    def papers(self) -> list[SearchHit]:
        """One stand-in hit per document (id, title, DOI, arXiv id): what cross-source dedupe matches on."""
        return self._reads.papers()

    # --- progressive embedding ----------------------------------------------------------

    def pending_count(self) -> int:
        """How many searchable passages have no vector in the index yet."""
        index = self.index()
        return sum(1 for pid, _ in self._searchable_rows() if pid not in index)

    def embed_pending(self, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> int:
        """Embed the passages not yet in the vector index; returns how many were added.

        Vectors of removed passages are dropped from the index first. Work is done in steps of
        :data:`EMBED_STEP` passages; cancel stops between steps (and between batches inside one)
        with everything finished kept in the cache and saved in the index.
        """
        with self._embed_lock:
            index = self.index(progress, cancel)
            rows = self._searchable_rows()
            current = {pid for pid, _ in rows}
            stale = [pid for pid in index.passage_ids() if pid not in current]
            removed = index.remove(stale) if stale else 0
            pending_ids = [pid for pid, _ in rows if pid not in index]
            steps = (self._passages_for_embedding(pending_ids[start:start + EMBED_STEP])
                     for start in range(0, len(pending_ids), EMBED_STEP))
            index, added = embed_into_index(index, self.index_path, steps, len(pending_ids), self.embedder,
                                            self.cache, self._cached_vectors, progress, cancel,
                                            changed=removed > 0)
            with self._lock:
                self._index = index  # a new object when it outgrew exact search and was rebuilt as IVF
            log.info("embedded %d passages (%d stale vectors removed)", added, removed)
            return added

    def _passages_for_embedding(self, passage_ids: Sequence[str]) -> list[Passage]:
        return self._reads.passages_for_embedding(passage_ids)
