"""Which of a paper's passages answers the question: BM25 computed within the paper.

Over a library of full-text papers, hybrid search finds the paper a specific question is about
reliably (on the LitQA2 dev questions the question's paper ranked first for 40 of the 41 whose
passages survive extraction); what goes wrong is the order of that paper's own passages. They
all share the paper's topic words ("Csx23", "nanobody", "mu-opioid receptor"), and a corpus-wide
IDF counts those as the rare, telling words, so a passage that repeats the topic outranks the one
that holds the asked-for detail ("which metal ion coordinates ..."). Inside one paper the telling
words are the ones that are rare *in that paper*.

So each paper's candidates are scored again by BM25 over that paper's candidates alone (FTS5's
own ``bm25()`` on an in-memory table with the product's tokenizer: the same stems and formula as
the main index, with document frequencies counted within the paper), and the paper's passages
are re-ordered among the places the paper already holds: by their fused z-score plus ``weight``
times their paper-local BM25 z-score. Papers keep their places, so the ranking of papers, and
with it every collection of one-passage papers (snippet datastores), is left alone.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import replace

from engine.retrieve.dedupe import paper_groups
from engine.store.vocabulary import TOKENIZER
from engine.types import SearchHit

log = logging.getLogger(__name__)

# A paper needs this many candidates for its own document frequencies to mean anything.
MIN_PASSAGES = 3


def local_bm25(fts_query: str, texts: Sequence[str]) -> list[float]:
    """BM25 of ``fts_query`` for each text, with IDF and lengths counted over ``texts`` only (higher is better)."""
    if not fts_query or not texts:
        return [0.0] * len(texts)
    conn = sqlite3.connect(":memory:")  # per call: cheap (~0.2 ms), and searches may run on several threads
    try:
        conn.execute(f"CREATE VIRTUAL TABLE paper USING fts5(text, tokenize = '{TOKENIZER}')")
        conn.executemany("INSERT INTO paper(rowid, text) VALUES (?, ?)", enumerate(texts, start=1))
        found = dict(conn.execute("SELECT rowid, -bm25(paper) FROM paper WHERE paper MATCH ?", (fts_query,)))
    finally:
        conn.close()
    return [float(found.get(row, 0.0)) for row in range(1, len(texts) + 1)]


def _zscores(values: Sequence[float]) -> list[float]:
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return [0.0] * len(values) if spread <= 1e-12 else [(v - mean) / spread for v in values]


def reorder_within_papers(hits: Sequence[SearchHit], fts_query: str, weight: float,
                          min_passages: int = MIN_PASSAGES) -> list[SearchHit]:
    """``hits`` (best first) with each paper's passages re-ordered by fused + ``weight`` x paper-local BM25.

    A paper's passages move only among the places the paper holds; a passage takes the score of
    the place it moves to (so the list stays sorted) and gains a ``("within_paper", n)`` rank.
    Papers with fewer than ``min_passages`` candidates, and ``weight`` <= 0, change nothing.
    """
    if weight <= 0 or len(hits) < min_passages:
        return list(hits)
    places: dict[str, list[int]] = {}
    for position, group in enumerate(paper_groups(hits)):
        places.setdefault(group, []).append(position)
    result = list(hits)
    for positions in places.values():
        if len(positions) < min_passages:
            continue
        try:
            local = local_bm25(fts_query, [hits[p].text for p in positions])
        except sqlite3.Error as exc:  # the query builder makes only quoted words: keep the fused order
            log.warning("paper-local BM25 skipped: %s", exc)
            return list(hits)
        fused = _zscores([hits[p].score for p in positions])
        combined = [f + weight * z for f, z in zip(fused, _zscores(local), strict=True)]
        order = sorted(range(len(positions)), key=lambda i: -combined[i])
        local_rank = {i: rank for rank, i in enumerate(sorted(range(len(positions)), key=lambda i: -local[i]), 1)}
        for place, chosen in zip(positions, order, strict=True):
            moved = hits[positions[chosen]]
            result[place] = replace(moved, score=hits[place].score,
                                    ranks=(*moved.ranks, ("within_paper", local_rank[chosen])))
    return result
