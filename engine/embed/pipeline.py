"""Embedding passages through the cache: only text the cache has not seen reaches the model."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.embed.base import Embedder, length_order
from engine.embed.cache import EmbeddingCache
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.types import Passage

log = logging.getLogger(__name__)

# Misses are embedded and written to the cache this many at a time: large enough that SQLite
# commits are rare, small enough that a cancel or a crash loses little work.
WRITE_BATCH = 256


@dataclass(frozen=True)
class EmbeddingResult:
    """Vectors aligned with the passages given, and how many were computed vs. found cached."""

    vectors: np.ndarray
    computed: int
    reused: int


def embed_passages(embedder: Embedder, cache: EmbeddingCache, passages: Sequence[Passage],
                   progress: ProgressCallback = no_progress, cancel: CancelToken | None = None,
                   batch_size: int = 32) -> EmbeddingResult:
    """Embed ``passages`` (their ``search_text``), computing only vectors the cache lacks.

    Cancel is checked between batches; everything embedded before it is already in the cache,
    so calling again resumes where it stopped. Identical texts are embedded once.
    """
    model_id = embedder.model_id
    vectors = np.zeros((len(passages), embedder.dimension), dtype=np.float32)
    cached = cache.get_many(model_id, (p.content_hash for p in passages))
    texts_by_hash: dict[str, str] = {}
    for passage in passages:
        if passage.content_hash not in cached:
            texts_by_hash.setdefault(passage.content_hash, passage.search_text)
    reused_rows = len(passages) - sum(1 for p in passages if p.content_hash in texts_by_hash)
    missing = list(texts_by_hash)
    # Sort once over all misses so every write batch holds texts of similar length (less padding).
    missing = [missing[i] for i in length_order([texts_by_hash[h] for h in missing])]
    total = len(missing)
    progress(Progress("embed", 0, total, f"{reused_rows} of {len(passages)} passages already embedded"))
    computed: dict[str, np.ndarray] = {}
    for start in range(0, total, WRITE_BATCH):
        if cancel is not None:
            cancel.check()
        hashes = missing[start:start + WRITE_BATCH]
        done_before = start

        def report(inner: Progress, offset: int = done_before) -> None:
            progress(Progress("embed", offset + inner.done, total))

        batch = embedder.embed([texts_by_hash[h] for h in hashes], batch_size=batch_size, progress=report,
                               cancel=cancel)
        cache.put_many(model_id, hashes, batch)
        computed.update(zip(hashes, batch, strict=True))
    for row, passage in enumerate(passages):
        vector = cached.get(passage.content_hash)
        vectors[row] = vector if vector is not None else computed[passage.content_hash]
    log.debug("embedded %d new texts, reused %d cached passages", total, reused_rows)
    return EmbeddingResult(vectors=vectors, computed=total, reused=reused_rows)
