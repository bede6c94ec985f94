"""The embedder protocol and the small numeric helpers every implementation shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from engine.progress import CancelToken, ProgressCallback, no_progress


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    ``model_id`` names the model *and* everything that changes its vectors (weights, backend,
    quantisation): it keys cached embeddings and is recorded in every index the vectors build,
    so a different id means "re-embed and rebuild", never a silent mix of vector spaces.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str], batch_size: int = 32, progress: ProgressCallback = no_progress,
              cancel: CancelToken | None = None) -> np.ndarray:
        """Return a ``(len(texts), dimension)`` float32 array, one unit-length row per text."""
        ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Questions' vectors: the embedder's own query form where it has one (e5's ``query:`` prefix).

    Models trained without roles (all-MiniLM-L6-v2) embed a question as any other text.
    """
    method = getattr(embedder, "embed_queries", None)
    return method(texts) if callable(method) else embedder.embed(texts)


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Scale each row to unit length (rows of zeros stay zero) and return contiguous float32."""
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    if matrix.size == 0:
        return matrix
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.maximum(norms, np.float32(1e-12), out=norms)
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)


def length_order(texts: Sequence[str]) -> list[int]:
    """Indices of ``texts``, longest first: batches of similar length waste less padding.

    This is the order ``SentenceTransformer.encode`` uses internally; doing it across all texts
    (not just within one small batch) is what keeps batch-by-batch encoding as fast as one call.
    """
    return sorted(range(len(texts)), key=lambda index: -len(texts[index]))
