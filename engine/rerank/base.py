"""The reranking stage: reorder a short candidate list by a closer look at query and passage.

Rerankers are chosen by name (``"none"``, ``"cross-encoder"``, ``"lm"``); ``"auto"`` means the
one the dev-set measurement supports (see engine.rerank.choose and the README's Retrieval section).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from engine.progress import CancelToken
from engine.types import SearchHit


@runtime_checkable
class Reranker(Protocol):
    @property
    def name(self) -> str: ...

    def rerank(self, query: str, hits: Sequence[SearchHit], cancel: CancelToken | None = None) -> list[SearchHit]:
        """``hits`` reordered best first, each with its reranker score and a ``"rerank"`` rank."""
        ...


class NoReranker:
    """Keeps the fused order."""

    name = "none"

    def rerank(self, query: str, hits: Sequence[SearchHit], cancel: CancelToken | None = None) -> list[SearchHit]:
        return list(hits)


def with_rerank_scores(hits: Sequence[SearchHit], scores: Sequence[float]) -> list[SearchHit]:
    """Sort ``hits`` by ``scores`` (stable: ties keep the fused order) and record score and rank."""
    order = sorted(range(len(hits)), key=lambda i: -scores[i])
    return [replace(hits[i], score=float(scores[i]), ranks=(*hits[i].ranks, ("rerank", rank)))
            for rank, i in enumerate(order, start=1)]
