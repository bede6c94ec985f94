"""A sentence-transformers ``CrossEncoder`` read from a local folder (no hub download).

No cross-encoder ships with Quire: none is available as a package here (see docs/history/retrieval.md,
the reranker). A user who has one (e.g. ms-marco-MiniLM-L-6-v2 saved with
``CrossEncoder.save``) points ``retrieval.reranker`` at it as ``"cross-encoder:/path/to/folder"``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.errors import ModelNotFoundError
from engine.progress import CancelToken
from engine.rerank.base import with_rerank_scores
from engine.types import SearchHit

BATCH = 16
MAX_PASSAGE_CHARS = 2_000


class CrossEncoderReranker:
    """Scores (query, passage) pairs jointly; loaded on first use, one batch at a time."""

    name = "cross-encoder"

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).expanduser()
        if not (self.folder / "config.json").is_file():
            raise ModelNotFoundError(f"No cross-encoder at {self.folder} (no config.json); set retrieval.reranker to "
                                     "'cross-encoder:/path/to/a/saved/CrossEncoder' or to 'none'.")
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import CrossEncoder

                    self._model = CrossEncoder(str(self.folder), device="cpu", local_files_only=True)
                except Exception as exc:  # transformers raises many types for a bad folder
                    raise ModelNotFoundError(f"The cross-encoder at {self.folder} could not be loaded "
                                             f"({exc}).") from None
            return self._model

    def rerank(self, query: str, hits: Sequence[SearchHit], cancel: CancelToken | None = None) -> list[SearchHit]:
        if not hits:
            return []
        model = self._load()
        scores: list[float] = []
        for start in range(0, len(hits), BATCH):
            if cancel is not None:
                cancel.check()
            pairs = [(query, hit.search_text[:MAX_PASSAGE_CHARS]) for hit in hits[start:start + BATCH]]
            scores.extend(float(s) for s in model.predict(pairs, batch_size=BATCH, show_progress_bar=False))
        return with_rerank_scores(hits, scores)
