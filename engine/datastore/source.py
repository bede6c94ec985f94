"""One datastore as a :class:`~engine.retrieve.source.PassageSource`: FTS5 BM25 plus a FAISS index.

Passage ids seen outside are ``<datastore name>:<record id>#<ordinal>``, unique across the
library and every datastore; inside the datastore (its SQLite and its index) they are
``<record id>#<ordinal>``, so a datastore's files do not depend on its name. Hits carry the
record's original id as ``doc_id`` and the datastore's name as ``source``.

Vectors are cached per datastore (``embeddings.db``) by content hash, so a cancelled or killed
embedding run resumes without recomputing, and a damaged index is rebuilt from the cache.

BM25 runs on precomputed postings (:mod:`engine.retrieve.postings`, built after each import) when
they match the stored passages, and on FTS5 otherwise (the same ranking, only slower).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path

import numpy as np

from engine.bibliography import Bibliography
from engine.datastore.files import CACHE_FILE, DATABASE_FILE, INDEX_FILE, POSTINGS_FOLDER
from engine.datastore.store import DatastoreStore, StoredPassage
from engine.embed import Embedder, EmbeddingCache
from engine.errors import IndexCorruptError
from engine.index import IndexHeader, open_or_rebuild, read_header
from engine.index.faiss_index import FaissIndex
from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.retrieve.embedding import EMBED_STEP, embed_into_index
from engine.retrieve.fts import (
    TEXT_WEIGHT,
    TITLE_WEIGHT,
    CommonTerms,
    FtsStemmer,
)
from engine.retrieve.postings import Bm25Postings, PostingsError, PostingsStamp, build_postings, search_fts_query
from engine.retrieve.source import ScoredId
from engine.store.vocabulary import FtsVocabulary, vocabulary_table_sql
from engine.types import Passage, SearchHit

log = logging.getLogger(__name__)

_READ_STEP = 4096


def local_passage_id(record_id: str, ordinal: int) -> str:
    return f"{record_id}#{ordinal}"


class DatastoreSource:
    """Search over one datastore folder (database, vector index, embedding cache)."""

    def __init__(self, name: str, folder: Path, embedder: Callable[[], Embedder]) -> None:
        self._name = name
        self.folder = folder
        self.store = DatastoreStore(folder / DATABASE_FILE)
        self.index_path = folder / INDEX_FILE
        self._embedder = embedder
        self._cache: EmbeddingCache | None = None
        self._index: FaissIndex | None = None
        self._lock = threading.RLock()
        self._embed_lock = threading.Lock()
        self._prefix = f"{name}:"
        self.store.query(vocabulary_table_sql())
        self._vocabulary = FtsVocabulary(self.store.query)
        self._common_terms = CommonTerms(self._vocabulary)
        self._stemmer = FtsStemmer()
        self._postings: Bm25Postings | None = None
        self._postings_loaded = False
        self._postings_lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    def close(self) -> None:
        with self._lock:
            self.store.close()
            if self._cache is not None:
                self._cache.close()
                self._cache = None
            self._index = None

    @property
    def cache(self) -> EmbeddingCache:
        with self._lock:
            if self._cache is None:
                self._cache = EmbeddingCache(self.folder / CACHE_FILE)
            return self._cache

    # --- ids -------------------------------------------------------------------------------

    def public_id(self, local_id: str) -> str:
        return self._prefix + local_id

    def _local(self, passage_id: str) -> tuple[str, int] | None:
        if not passage_id.startswith(self._prefix):
            return None
        record_id, _, ordinal = passage_id[len(self._prefix):].rpartition("#")
        return (record_id, int(ordinal)) if record_id and ordinal.isdigit() else None

    # --- lexical ---------------------------------------------------------------------------

    def lexical(self, fts_query: str, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        """BM25 with the library's column weights, best first; ``doc_ids`` are original record ids."""
        if k <= 0 or not fts_query:
            return []
        if doc_ids is None:
            found = self._lexical_from_postings(fts_query, k)
            if found is not None:
                return found
        rows = self.store.keyword_search(self._common_terms.prune(fts_query), k,
                                         None if doc_ids is None else list(doc_ids))
        return [(self.public_id(local_passage_id(record_id, ordinal)), float(value))
                for record_id, ordinal, value in rows]

    def stem_frequencies(self, low: str, high: str) -> dict[str, int]:
        """Indexed stems in [low, high) with their passage counts (see PassageSource)."""
        postings = self.postings()
        if postings is not None:  # a binary search; fts5vocab would count every posting in the range
            return postings.stems_between(low, high)
        return self._vocabulary.stems_between(low, high)

    def _lexical_from_postings(self, fts_query: str, k: int) -> list[ScoredId] | None:
        """The FTS5 query's result from the precomputed postings; None when they cannot answer it."""
        postings = self.postings()
        # The postings count a word alike in title and text, as FTS5 does with equal column weights.
        if postings is None or TITLE_WEIGHT != TEXT_WEIGHT:
            return None
        found = search_fts_query(postings, self._stemmer, fts_query, k)
        if found is None:
            return None
        if not found:
            return []
        keys = self.store.passage_keys([rowid for rowid, _ in found])
        ids = {rowid: local_passage_id(record_id, ordinal) for rowid, (record_id, ordinal) in keys.items()}
        return [(self.public_id(ids[rowid]), score) for rowid, score in found if rowid in ids]

    # --- BM25 postings -----------------------------------------------------------------------

    def postings(self) -> Bm25Postings | None:
        """The precomputed BM25 postings, when they exist and match the stored passages."""
        with self._postings_lock:
            if not self._postings_loaded:
                self._postings_loaded = True
                try:
                    postings = Bm25Postings(self.folder / POSTINGS_FOLDER)
                except PostingsError as exc:
                    log.info("datastore %s: BM25 by FTS5 (%s)", self._name, exc)
                    return None
                if postings.stamp != self._stamp():
                    log.info("datastore %s: BM25 by FTS5 until its postings are rebuilt (passages changed)",
                             self._name)
                    return None
                self._postings = postings
            return self._postings

    def forget_postings(self) -> None:
        """Stop using the postings (before passages are added); :meth:`build_postings` makes new ones."""
        with self._postings_lock:
            self._postings, self._postings_loaded = None, True

    def build_postings(self, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> bool:
        """Precompute BM25 postings unless current ones exist; True when it built them."""
        stamp = self._stamp()
        with self._postings_lock:
            try:
                if Bm25Postings(self.folder / POSTINGS_FOLDER).stamp == stamp:
                    self._postings_loaded = False  # load them on the next search
                    return False
            except PostingsError:
                pass
            self._postings = None
        postings = build_postings(self.store.reading_connection, self.folder / POSTINGS_FOLDER, stamp,
                                  progress=progress, cancel=cancel)
        with self._postings_lock:
            self._postings, self._postings_loaded = postings, True
        return True

    def _stamp(self) -> PostingsStamp:
        return PostingsStamp(*self.store.passage_stamp())

    # --- dense -----------------------------------------------------------------------------

    def has_index(self) -> bool:
        return self._index is not None or self.index_path.is_file()

    def index(self, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> FaissIndex:
        """The vector index of the current embedder, loaded once; rebuilt from the cache when missing or stale."""
        with self._lock:
            embedder = self._embedder()
            if self._index is None or self._index.model_id != embedder.model_id:
                self._index = open_or_rebuild(self.index_path, embedder.model_id, embedder.dimension,
                                              self._cached_vectors, progress, cancel,
                                              expected_count=self.store.counts()["passages"])
            return self._index

    def _cached_vectors(self) -> Iterator[tuple[list[str], np.ndarray]]:
        model_id = self._embedder().model_id
        after = 0
        while True:
            chunk = self.store.passages_after(after, _READ_STEP)
            if not chunk:
                return
            after = chunk[-1][0]
            found = self.cache.get_many(model_id, (p.content_hash for _, p in chunk))
            kept = [(local_passage_id(p.record_id, p.ordinal), found[p.content_hash])
                    for _, p in chunk if p.content_hash in found]
            if kept:
                yield [pid for pid, _ in kept], np.stack([vector for _, vector in kept])

    def dense(self, query_vector: np.ndarray, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        """Nearest embedded passages by cosine; none while the datastore has no vector index yet."""
        if k <= 0 or not self.has_index():
            return []
        index = self.index()
        vector = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if vector.shape[0] != index.dimension or len(index) == 0:
            return []
        if doc_ids is None:
            hits = index.search(vector, k)
        else:
            # Records are few against the whole datastore: over-fetch, then keep theirs.
            wanted = set(doc_ids)
            hits = [(pid, score) for pid, score in index.search(vector, min(len(index), max(200, 50 * k)))
                    if pid.rpartition("#")[0] in wanted]
        return [(self.public_id(pid), float(score)) for pid, score in hits[:k]]

    def vectors(self, passage_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of these passages under the current embedder; none before the first embedding."""
        if not self.has_index():
            return {}
        hashes: dict[str, str] = {}
        for passage_id in passage_ids:
            local = self._local(passage_id)
            content_hash = self.store.content_hash(*local) if local else None
            if content_hash:
                hashes[passage_id] = content_hash
        found = self.cache.get_many(self._embedder().model_id, hashes.values())
        return {pid: found[h] for pid, h in hashes.items() if h in found}

    # --- hits ------------------------------------------------------------------------------

    def hits(self, passage_ids: Sequence[str]) -> list[SearchHit]:
        """The passages as SearchHits in the given order; ids of other sources or unknown ids are skipped."""
        found: list[SearchHit] = []
        for passage_id in passage_ids:
            local = self._local(passage_id)
            if local is None:
                continue
            row = self.store.passage_with_record(*local)
            if row is None:
                continue
            record_id, title, text, authors, year, doi, arxiv_id, url = row
            bib = Bibliography(title=title, authors=tuple(_json_loads_list(authors)), year=year, doi=doi,
                               arxiv_id=arxiv_id, url=url)
            found.append(SearchHit(passage_id=passage_id, doc_id=record_id, source=self._name, bib=bib, text=text))
        return found

    # --- embedding -------------------------------------------------------------------------

    def pending_count(self) -> int:
        """Passages without a vector in the index (0 once fully embedded)."""
        total = self.store.counts()["passages"]
        if not self.has_index():
            return total
        return max(0, total - len(self.index()))

    def embed_pending(self, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> int:
        """Embed the passages not yet in the index, in steps; cancel keeps (and saves) what was done."""
        with self._embed_lock:
            index = self.index(progress, cancel)
            embedder = self._embedder()
            total = max(0, self.store.counts()["passages"] - len(index))
            index, added = embed_into_index(index, self.index_path, self._pending_steps(index), total, embedder,
                                            self.cache, self._cached_vectors, progress, cancel)
            with self._lock:
                self._index = index  # a new object when it outgrew exact search and was rebuilt as IVF
            self.store.set_meta(embedding_model=embedder.model_id, embedding_dimension=str(embedder.dimension))
            return added

    def _pending_steps(self, index: FaissIndex) -> Iterator[list[Passage]]:
        after = 0
        step: list[Passage] = []
        while True:
            chunk = self.store.passages_after(after, _READ_STEP)
            if not chunk:
                break
            after = chunk[-1][0]
            for _, stored in chunk:
                local_id = local_passage_id(stored.record_id, stored.ordinal)
                if local_id not in index:
                    step.append(_passage(local_id, stored))
                    if len(step) >= EMBED_STEP:
                        yield step
                        step = []
        if step:
            yield step

    def index_header(self) -> IndexHeader | None:
        """What the saved index says about itself, or None when there is none (or it is damaged)."""
        try:
            return read_header(self.index_path)
        except (FileNotFoundError, IndexCorruptError):
            return None

    def embedding(self) -> threading.Lock:
        """Held while embedding; hold it to read the index file without a run rewriting it."""
        return self._embed_lock


def _passage(local_id: str, stored: StoredPassage) -> Passage:
    # Light Passages (text, title, hash; no pages or boxes): all embedding needs.
    return Passage(id=local_id, doc_id=stored.record_id, ordinal=stored.ordinal, text=stored.text, title=stored.title,
                   page_start=0, page_end=0, char_start=0, char_end=0, rects=(), content_hash=stored.content_hash)


def _json_loads_list(value: str) -> list[str]:
    try:
        loaded = json.loads(value or "[]")
    except (ValueError, RecursionError):  # install refuses both; a datastore from before that check may hold them
        return []
    return [str(item) for item in loaded] if isinstance(loaded, list) else []
