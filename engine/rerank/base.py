"""The reranking stage: reorder a short candidate list by a closer look at query and passage.

Rerankers are chosen by name (``"none"``, ``"cross-encoder"``, ``"lm"``); ``"auto"`` means the
one the dev-set measurement supports (see engine.rerank.choose). The Reranker protocol and the
NoReranker default live in engine.protocols, so retrieval needs nothing from this package.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engine.protocols import NoReranker, Reranker
from engine.types import SearchHit

__all__ = ["NoReranker", "Reranker", "with_rerank_scores"]


def with_rerank_scores(hits: Sequence[SearchHit], scores: Sequence[float]) -> list[SearchHit]:
    """Sort ``hits`` by ``scores`` (stable: ties keep the fused order) and record score and rank."""
    order = sorted(range(len(hits)), key=lambda i: -scores[i])
    return [replace(hits[i], score=float(scores[i]), ranks=(*hits[i].ranks, ("rerank", rank)))
            for rank, i in enumerate(order, start=1)]
