"""What retrieval needs from a place that holds passages: the library or one attached datastore.

Both the library and every datastore implement ``PassageSource``; the retriever fans a query out
to each source, fuses the ranked lists and deduplicates papers across sources. Scores returned
here are "higher is better" within one source and one retriever only; fusion turns each list's
scores into z-scores before it adds them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

import numpy as np

from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.types import SearchHit

ScoredId = tuple[str, float]  # (passage id, score), higher is better


class PassageSource(Protocol):
    """A searchable collection of passages with its own SQLite (FTS5) and vector index."""

    @property
    def name(self) -> str:
        """``"library"`` or the datastore's name; becomes ``SearchHit.source``."""
        ...

    def lexical(self, fts_query: str, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        """BM25 over the source's FTS5 table. ``fts_query`` is an already-safe FTS5 MATCH
        expression (built by engine.retrieve.fts); ``doc_ids`` restricts to those documents."""
        ...

    def dense(self, query_vector: np.ndarray, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        """Nearest passages by inner product among those embedded so far (may be fewer than all)."""
        ...

    def vectors(self, passage_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors (of the current embedder) of these passages; those without one are left out."""
        ...

    def stem_frequencies(self, low: str, high: str) -> dict[str, int]:
        """The indexed word stems from ``low`` (included) to ``high`` (excluded), each with how many
        passages hold it: FTS5's own vocabulary, which spelling correction searches."""
        ...

    def hits(self, passage_ids: Sequence[str]) -> list[SearchHit]:
        """The passages as SearchHits (score 0), in the given order; unknown ids are skipped."""
        ...

    def embed_pending(self, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> int:
        """Embed the passages not yet in the vector index (resumable); returns how many were added."""
        ...
