"""One paper, one place in the results: cross-source paper identity, grouping, per-paper caps, near-duplicates.

A paper is recognised by its DOI, its arXiv id (version stripped) or its normalised title; two
hits sharing any of these are the same paper, whichever source they come from. Pure functions
over ranked :class:`~engine.types.SearchHit` lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from engine.bibliography import Bibliography
from engine.text.characters import ascii_fold
from engine.tuning import RETRIEVAL
from engine.types import SearchHit

_NON_WORD = re.compile(r"[^0-9a-z]+")
_ARXIV_VERSION = re.compile(r"v\d+$")
_DOI_PREFIX = re.compile(r"^(https?://(dx\.)?doi\.org/|doi:)", re.IGNORECASE)
# Titles shorter than this ("Introduction", "Abstract", "Untitled") say nothing about identity.
MIN_TITLE_CHARS = 16
NEAR_DUPLICATE_JACCARD = RETRIEVAL.near_duplicate_jaccard


def normalize_title(title: str) -> str:
    """Lower-case ASCII words joined by single spaces: accents, punctuation and case do not matter."""
    folded = ascii_fold(title).lower()
    return _NON_WORD.sub(" ", folded).strip()


def normalize_doi(doi: str) -> str:
    return _DOI_PREFIX.sub("", doi.strip()).lower()


def normalize_arxiv(arxiv_id: str) -> str:
    value = arxiv_id.strip().lower().removeprefix("arxiv:")
    return _ARXIV_VERSION.sub("", value)


def paper_keys(hit: SearchHit) -> set[str]:
    """Every key that identifies ``hit``'s paper; its own (source, doc id) is always one of them."""
    return bibliography_keys(hit.source, hit.doc_id, hit.bib)


def bibliography_keys(source: str, doc_id: str, bib: Bibliography) -> set[str]:
    """The keys of the paper ``bib`` describes, held as ``doc_id`` in ``source``: DOI, arXiv id, title."""
    keys = {f"doc:{source}:{doc_id}"}
    if bib.doi:
        keys.add(f"doi:{normalize_doi(bib.doi)}")
    if bib.arxiv_id:
        keys.add(f"arxiv:{normalize_arxiv(bib.arxiv_id)}")
    title = normalize_title(bib.title)
    if len(title) >= MIN_TITLE_CHARS:
        keys.add(f"title:{title}")
    return keys


class _Papers:
    """Union-find over paper keys: hits sharing any key end up in one group."""

    def __init__(self) -> None:
        self._parent: dict[str, str] = {}

    def _find(self, key: str) -> str:
        self._parent.setdefault(key, key)
        while self._parent[key] != key:
            self._parent[key] = self._parent[self._parent[key]]
            key = self._parent[key]
        return key

    def group(self, keys: Iterable[str]) -> str:
        roots = [self._find(key) for key in keys]
        first = roots[0]
        for root in roots[1:]:
            self._parent[root] = first
        return first

    def root(self, key: str) -> str:
        return self._find(key)


def paper_groups(hits: Sequence[SearchHit]) -> list[str]:
    """For each hit, an id of its paper group (equal ids = same paper)."""
    papers = _Papers()
    hit_keys = [paper_keys(hit) for hit in hits]
    for keys in hit_keys:
        papers.group(sorted(keys))
    return [papers.root(sorted(keys)[0]) for keys in hit_keys]


def with_paper_evidence(hits: Sequence[SearchHit], weight: float) -> list[SearchHit]:
    """The hits re-ranked by adding ``weight`` times the best (positive) score of another hit of the
    same paper: a passage whose paper holds more matching passages is likelier to be what the
    question is about (document-level evidence for passage ranking). Stable for equal scores."""
    if weight <= 0 or len(hits) < 2:
        return list(hits)
    groups = paper_groups(hits)
    best: dict[str, list[float]] = {}
    for hit, group in zip(hits, groups, strict=True):
        top = best.setdefault(group, [])
        top.append(hit.score)
        top.sort(reverse=True)
        del top[2:]  # a hit's best sibling is the group's best, or its second best for the best itself

    def boosted(hit: SearchHit, group: str) -> SearchHit:
        top = best[group]
        # The best other hit: the group's best, unless this is it; then the runner-up, if any.
        sibling = top[0] if hit.score < top[0] else (top[1] if len(top) > 1 else None)
        return hit if sibling is None else replace(hit, score=hit.score + weight * max(0.0, sibling))

    rescored = [boosted(hit, group) for hit, group in zip(hits, groups, strict=True)]
    return sorted(rescored, key=lambda hit: -hit.score)


def prefer_library(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """Drop datastore hits of papers that the library also returned: the library copy has pages and boxes."""
    groups = paper_groups(hits)
    in_library = {group for hit, group in zip(hits, groups, strict=True) if hit.is_library}
    return [hit for hit, group in zip(hits, groups, strict=True) if hit.is_library or group not in in_library]


def cap_per_paper(hits: Sequence[SearchHit], per_paper: int) -> list[SearchHit]:
    """Keep at most ``per_paper`` hits of each paper, in rank order (0 or less: no cap)."""
    if per_paper <= 0:
        return list(hits)
    counts: dict[str, int] = {}
    kept: list[SearchHit] = []
    for hit, group in zip(hits, paper_groups(hits), strict=True):
        if counts.get(group, 0) < per_paper:
            counts[group] = counts.get(group, 0) + 1
            kept.append(hit)
    return kept


def group_by_paper(hits: Sequence[SearchHit]) -> list[list[SearchHit]]:
    """The hits grouped by paper: papers in the order of their best hit, each paper's hits in rank order.

    What a person reading search results wants: all of a paper's matching passages together,
    the best paper first, without losing any passage the ranking kept.
    """
    groups: dict[str, list[SearchHit]] = {}
    for hit, group in zip(hits, paper_groups(hits), strict=True):
        groups.setdefault(group, []).append(hit)
    return list(groups.values())


def _shingles(text: str) -> set[int]:
    """The word 3-grams of ``text``, as hashes: set algebra on ints is several times faster than on
    tuples, whose hash CPython recomputes at every lookup (this runs on every search)."""
    words = _NON_WORD.sub(" ", text.lower()).split()
    if len(words) < 3:
        return {hash(tuple(words))}
    return {hash((words[i], words[i + 1], words[i + 2])) for i in range(len(words) - 2)}


def collapse_near_duplicates(hits: Sequence[SearchHit], threshold: float = NEAR_DUPLICATE_JACCARD) -> list[SearchHit]:
    """Drop a hit whose text is (nearly) the same as a better-ranked one's: overlapping chunks, copies."""
    kept: list[SearchHit] = []
    kept_shingles: list[set[int]] = []
    for hit in hits:
        shingles = _shingles(hit.text)
        duplicate = False
        for other in kept_shingles:
            # Jaccard >= t needs the smaller set to be at least t times the larger: skip the rest.
            if min(len(shingles), len(other)) < threshold * max(len(shingles), len(other)):
                continue
            common = len(shingles & other)
            union = len(shingles) + len(other) - common
            if union and common / union >= threshold:
                duplicate = True
                break
        if not duplicate:
            kept.append(hit)
            kept_shingles.append(shingles)
    return kept
