"""Verify an LM's answer against the passages it was given: drop, insert, flag.

For each sentence: numbers that name no passage given to the model are removed (invented);
each remaining citation is kept only when the support scorer finds a window of that passage
supporting the sentence (that window becomes the verbatim quote); a citation-worthy sentence
left without a citation gets the best-supporting passage when it clears the stricter insert
threshold; a citation-worthy sentence still without support is flagged ``supported=False``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from engine.cite.markers import cited_numbers, format_marker, strip_markers
from engine.cite.sentences import split_spans
from engine.cite.support import SupportScorer, content_words
from engine.types import AnswerSentence, Citation, PageRect, Reference

RectsFor = Callable[[str, int, int], tuple[PageRect, ...]]  # (passage id, start, end) -> boxes


def no_rects(_passage_id: str, _start: int, _end: int) -> tuple[PageRect, ...]:
    return ()


@dataclass
class VerifyReport:
    """What verification changed, for the benchmarks and the answer's notice."""

    invented: int = 0  # numbers naming no passage given to the model
    dropped: int = 0  # citations to a real passage that does not support the sentence
    inserted: int = 0
    kept: int = 0
    unsupported: list[str] = field(default_factory=list)


def needs_citation(claim: str) -> bool:
    """Headings, list labels and short connective sentences need no citation."""
    stripped = claim.strip()
    if not stripped or stripped.startswith("#") or stripped.endswith(":"):
        return False
    return len(content_words(stripped)) >= 3


def quote_citation(reference: Reference, start: int, end: int, score: float, rects_for: RectsFor,
                   inserted: bool = False) -> Citation:
    """A citation whose quote is ``reference.text[start:end]`` (verbatim by construction)."""
    return Citation(n=reference.n, passage_id=reference.passage_id, quote=reference.text[start:end],
                    quote_start=start, quote_end=end, support=round(score, 4),
                    rects=rects_for(reference.passage_id, start, end), inserted=inserted)


def verify_sentence(sentence: str, sources: Mapping[int, Reference], scorer: SupportScorer,
                    rects_for: RectsFor = no_rects, insert: bool = True, section: int = 0,
                    report: VerifyReport | None = None) -> AnswerSentence:
    """Check one sentence's citations; return it with only supported, verified citations."""
    report = report if report is not None else VerifyReport()
    claim = strip_markers(sentence)
    worthy = needs_citation(claim)
    citations: list[Citation] = []
    for n in cited_numbers(sentence):
        reference = sources.get(n)
        if reference is None:
            report.invented += 1
            continue
        match = scorer.best(claim, reference.text) if worthy else None
        if match is None or match.score < scorer.threshold:
            report.dropped += 1
            continue
        citations.append(quote_citation(reference, match.start, match.end, match.score, rects_for))
    if not citations and worthy and insert and sources:
        best: tuple[float, Reference, int, int] | None = None
        for reference in sources.values():
            match = scorer.best(claim, reference.text)
            if match is not None and (best is None or match.score > best[0]):
                best = (match.score, reference, match.start, match.end)
        if best is not None and best[0] >= scorer.insert_threshold:
            citations.append(quote_citation(best[1], best[2], best[3], best[0], rects_for, inserted=True))
            report.inserted += 1
    report.kept += sum(not c.inserted for c in citations)
    if worthy and not citations:
        report.unsupported.append(claim)
    text = _with_marker(claim, [c.n for c in citations])
    return AnswerSentence(text=text, citations=tuple(citations), supported=bool(citations) or not worthy,
                          section=section, needs_citation=worthy)


def verify_text(text: str, sources: Mapping[int, Reference], scorer: SupportScorer, rects_for: RectsFor = no_rects,
                insert: bool = True, section: int = 0,
                report: VerifyReport | None = None) -> list[AnswerSentence]:
    """Split ``text`` into sentences and verify each."""
    return [verify_sentence(text[s.start:s.end], sources, scorer, rects_for, insert, section, report)
            for s in split_spans(text)]


def _with_marker(claim: str, numbers: list[int]) -> str:
    """Put the marker before the sentence's final punctuation: "A claim [1, 2]."."""
    marker = format_marker(numbers)
    if not marker:
        return claim
    body = claim.rstrip()
    tail = ""
    while body and body[-1] in ".!?;:":
        tail = body[-1] + tail
        body = body[:-1]
    return f"{body.rstrip()} {marker}{tail}"
