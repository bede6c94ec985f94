"""Combining ranked lists: reciprocal rank fusion, and merging one retriever's lists across sources.

Pure functions over ``(passage id, score)`` lists, best first.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

from engine.retrieve.source import ScoredId
from engine.tuning import RETRIEVAL

DEFAULT_RRF_K = RETRIEVAL.rrf_k


def reciprocal_rank_fusion(ranked_lists: Mapping[str, Sequence[ScoredId]], k: float = DEFAULT_RRF_K,
                           weights: Mapping[str, float] | None = None) -> list[ScoredId]:
    """Fuse named ranked lists: each id scores ``sum(weight / (k + rank))`` over the lists it is in.

    A list named ``rewrite2`` takes the weight of ``rewrite2`` if given, else of ``rewrite``.

    Ties keep the order of first appearance (lists in the given order), so the result is
    deterministic. Returns (id, fused score), best first.
    """
    fused: dict[str, float] = {}
    for name, ranked in ranked_lists.items():
        weight = 1.0 if weights is None else weights.get(name, weights.get(name.rstrip("0123456789"), 1.0))
        if weight == 0:
            continue
        for rank, (passage_id, _) in enumerate(ranked, start=1):
            fused[passage_id] = fused.get(passage_id, 0.0) + weight / (k + rank)
    order = {pid: position for position, pid in enumerate(fused)}
    return sorted(fused.items(), key=lambda item: (-item[1], order[item[0]]))


def score_fusion(ranked_lists: Mapping[str, Sequence[ScoredId]], weights: Mapping[str, float] | None = None,
                 normalization: str = "zscore") -> list[ScoredId]:
    """Fuse named ranked lists by their normalised scores: each id scores ``sum(weight * norm(score))``.

    Unlike RRF, a passage far ahead of the rest in one list (a BM25 score twice the next one's)
    keeps that lead. ``normalization`` is ``zscore`` (score minus the list's mean, over its
    standard deviation) or ``minmax`` (to [0, 1]); a list of one score, or of equal scores, gives
    each of its ids 1. An id absent from a list gets nothing from it. Weights are looked up as
    in :func:`reciprocal_rank_fusion`; ties keep the order of first appearance.
    """
    if normalization not in ("zscore", "minmax"):
        raise ValueError(f"normalization must be 'zscore' or 'minmax', not {normalization!r}")
    fused: dict[str, float] = {}
    for name, ranked in ranked_lists.items():
        weight = 1.0 if weights is None else weights.get(name, weights.get(name.rstrip("0123456789"), 1.0))
        if weight == 0 or not ranked:
            continue
        for passage_id, value in zip((pid for pid, _ in ranked), _normalized([s for _, s in ranked], normalization),
                                     strict=True):
            fused[passage_id] = fused.get(passage_id, 0.0) + weight * value
    order = {pid: position for position, pid in enumerate(fused)}
    return sorted(fused.items(), key=lambda item: (-item[1], order[item[0]]))


def _normalized(scores: Sequence[float], normalization: str) -> list[float]:
    low, high = min(scores), max(scores)
    if len(scores) < 2 or high - low <= 1e-12 * max(1.0, abs(high)):
        return [1.0] * len(scores)
    if normalization == "minmax":
        return [(s - low) / (high - low) for s in scores]
    mean = sum(scores) / len(scores)
    deviation = (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5
    return [(s - mean) / deviation for s in scores]


def ranks_of(ranked_lists: Mapping[str, Sequence[ScoredId]]) -> dict[str, dict[str, int]]:
    """For each id, its 1-based rank in each named list it appears in (to explain a result)."""
    ranks: dict[str, dict[str, int]] = {}
    for name, ranked in ranked_lists.items():
        for rank, (passage_id, _) in enumerate(ranked, start=1):
            ranks.setdefault(passage_id, {}).setdefault(name, rank)
    return ranks


def merge_by_score(lists: Sequence[Sequence[ScoredId]], k: int) -> list[ScoredId]:
    """The ``k`` best of several lists whose scores are comparable (one retriever over several sources).

    An id found in more than one list keeps its best score.
    """
    best: dict[str, float] = {}
    for ranked in lists:
        for passage_id, score in ranked:
            if passage_id not in best or score > best[passage_id]:
                best[passage_id] = score
    return heapq.nlargest(k, best.items(), key=lambda item: item[1])
