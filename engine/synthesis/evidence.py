"""Evidence extraction: the passages' sentences that best answer the question, no LM needed.

Each passage's sentences are scored against the question with the same scorer that verifies
citations (embedding cosine + content-word overlap). The best non-overlapping windows of each
passage become its quotes; they are what the model reads and what the digest shows, so they are
always spans of the passage text (verbatim by construction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.cite.support import SupportScorer
from engine.types import Reference, SearchHit

# Under this relevance (the best quote's score against the question) a passage is off-topic.
# Fitted on the golden questions vs. off-topic questions (benchmarks/answers.py --fit-relevance).
RELEVANCE_THRESHOLD = 0.25
QUOTE_CHARS = 320
SECOND_QUOTE_SHARE = 0.85  # a passage's next quote must score at least this share of its best one


@dataclass(frozen=True)
class Quote:
    """A verbatim span of reference ``n``'s text, with its relevance to the question."""

    n: int
    start: int
    end: int
    text: str
    score: float


@dataclass(frozen=True)
class Evidence:
    """One numbered passage and its best quotes."""

    reference: Reference
    quotes: tuple[Quote, ...]
    relevance: float
    is_reference_list: bool = False

    @property
    def quotes_by_score(self) -> tuple[Quote, ...]:
        return tuple(sorted(self.quotes, key=lambda q: -q.score))


def to_reference(hit: SearchHit, n: int, text: str | None = None) -> Reference:
    """Number a search hit. ``text`` replaces the hit's text (the library passage as stored)."""
    return Reference(n=n, passage_id=hit.passage_id, doc_id=hit.doc_id, source=hit.source, title=hit.title,
                     text=hit.text if text is None else text, page=hit.page, page_end=hit.page_end,
                     authors=hit.authors, year=hit.year, doi=hit.doi, arxiv_id=hit.arxiv_id, url=hit.url)


def extract_evidence(question: str, references: Sequence[Reference], scorer: SupportScorer,
                     quotes_per_passage: int = 2, reference_lists: Sequence[bool] = ()) -> list[Evidence]:
    """The best ``quotes_per_passage`` non-overlapping quotes of each passage, passages in input order."""
    evidence = []
    for index, reference in enumerate(references):
        chosen: list[Quote] = []
        for match in scorer.rank(question, reference.text, pairs=False):
            if len(chosen) >= quotes_per_passage:
                break
            if match.end - match.start > QUOTE_CHARS or match.end - match.start < 25:
                continue
            if any(match.start < q.end and q.start < match.end for q in chosen):
                continue
            if chosen and match.score < SECOND_QUOTE_SHARE * chosen[0].score:
                break  # a much weaker second sentence dilutes the evidence more than it adds
            chosen.append(Quote(reference.n, match.start, match.end, reference.text[match.start:match.end],
                                round(match.score, 4)))
        chosen.sort(key=lambda q: q.start)  # reading order within the passage
        relevance = max((q.score for q in chosen), default=0.0)
        is_list = reference_lists[index] if index < len(reference_lists) else False
        evidence.append(Evidence(reference, tuple(chosen), relevance, is_list))
    return evidence


def relevant(evidence: Sequence[Evidence], threshold: float = RELEVANCE_THRESHOLD) -> list[Evidence]:
    """The passages whose best quote clears the relevance threshold, reference lists last."""
    kept = [e for e in evidence if e.quotes and e.relevance >= threshold]
    return sorted(kept, key=lambda e: e.is_reference_list)
