"""Does a passage support a sentence? A scorer that never asks the generating LM.

The score mixes two signals over the passage's sentences (and pairs of adjacent sentences):
the cosine similarity of sentence embeddings (a small sentence-transformers model) and the
share of the claim's content words found in the window (numbers count: "3.5" must be there).
The best window becomes the citation's quote. The mixing weight and the thresholds were fitted
on hand-labelled (sentence, passage) pairs from the real corpus (tests/data/support_pairs.jsonl,
fitted by benchmarks/answers.py pairs); precision and recall are in docs/numbers.md.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.cite.markers import strip_markers
from engine.cite.sentences import Span, split_spans
from engine.embed.base import Embedder
from engine.text.stem import stem
from engine.text.stopwords import CLAIM_FRAMING_WORDS, STOP_WORDS
from engine.text.tokens import WORD_OR_NUMBER, lower_words

if TYPE_CHECKING:
    from engine.cite.judge import SupportJudge

log = logging.getLogger(__name__)

# Fitted on tests/data/support_pairs.jsonl with the packaged all-MiniLM-L6-v2 (benchmarks/answers.py --fit).
EMBEDDING_WEIGHT = 0.4
SUPPORT_THRESHOLD = 0.67  # keep a citation the model made
INSERT_THRESHOLD = 0.75  # attach a citation the model did not make: stricter, it is the engine's claim
MAX_QUOTE_CHARS = 320

# What a claim's words are checked against: neither function words nor words that only frame it.
_NOT_CONTENT = STOP_WORDS | CLAIM_FRAMING_WORDS


def content_words(text: str) -> set[str]:
    """Lower-cased, stemmed words that carry meaning (stop words and markers removed)."""
    words = lower_words(strip_markers(text), WORD_OR_NUMBER)
    return {stem(w) for w in words if w not in _NOT_CONTENT and (len(w) > 2 or w.isdigit())}


def overlap(claim_words: set[str], window_words: set[str]) -> float:
    """Share of the claim's content words that the window contains."""
    return len(claim_words & window_words) / len(claim_words) if claim_words else 0.0


@dataclass(frozen=True)
class Window:
    """A candidate quote: ``text[start:end]`` of a passage."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Match:
    """How well one window supports (or answers) a claim."""

    score: float
    cosine: float
    overlap: float
    start: int
    end: int


def quote_windows(passage_text: str, max_chars: int = MAX_QUOTE_CHARS, pairs: bool = True) -> list[Window]:
    """Single sentences and (with ``pairs``) adjacent pairs when short enough; over-long sentences are
    cut at spaces. Front matter (title and author lines) is not prose and never becomes a quote."""
    sentences: list[Span] = []
    for span in split_spans(passage_text):
        sentences.extend(_cut_long(passage_text, span, max_chars))
    sentences = [s for s in sentences if prose_like(passage_text[s.start:s.end])]
    windows = [Window(s.start, s.end, passage_text[s.start:s.end]) for s in sentences]
    for first, second in itertools.pairwise(sentences if pairs else []):
        if second.end - first.start <= max_chars and not passage_text[first.end:second.start].strip():
            windows.append(Window(first.start, second.end, passage_text[first.start:second.end]))
    return windows


def prose_like(text: str) -> bool:
    """At least six words, mostly lower-case: rules out headings, author lists, tables of numbers."""
    words = [w for w in text.split() if any(c.isalpha() for c in w)]
    if len(words) < 6:
        return False
    return sum(w[0].islower() for w in words) >= 0.45 * len(words)


def _cut_long(text: str, span: Span, max_chars: int) -> list[Span]:
    pieces: list[Span] = []
    start = span.start
    while span.end - start > max_chars:
        cut = text.rfind(" ", start + max_chars // 2, start + max_chars)
        cut = cut if cut > start else start + max_chars
        pieces.append(Span(start, cut))
        start = cut + 1
    if span.end > start:
        pieces.append(Span(start, span.end))
    return pieces


class SupportScorer:
    """Scores claims against passage windows; embeddings are cached per text for the scorer's life.

    ``judge`` is the entailment judge verification asks first (engine/cite/verify.py): "shipped"
    (the default) loads the judge packaged with Quire on first use, None keeps the similarity
    thresholds alone, or pass a ``SupportJudge``.
    """

    def __init__(self, embedder: Embedder, weight: float = EMBEDDING_WEIGHT, threshold: float = SUPPORT_THRESHOLD,
                 insert_threshold: float = INSERT_THRESHOLD, judge: SupportJudge | str | None = "shipped") -> None:
        self.embedder = embedder
        self.weight = weight
        self.threshold = threshold
        self.insert_threshold = insert_threshold
        self._judge = judge
        self.judge_problem = ""  # why the shipped judge could not be loaded, if it could not
        self._vectors: dict[str, np.ndarray] = {}
        self._windows: dict[tuple[str, bool], list[Window]] = {}

    def support_judge(self) -> SupportJudge | None:
        """The entailment judge, loaded on first use; None when there is none. When the shipped judge
        cannot be loaded, ``judge_problem`` says why and verification marks citations "not checked"
        rather than deciding by similarity (a similar sentence is not a supported one)."""
        if isinstance(self._judge, str):
            from engine.cite.judge import default_judge
            from engine.errors import ModelNotFoundError

            try:
                self._judge = default_judge()
            except ModelNotFoundError as exc:
                log.warning("%s Citations are shown as written, marked as not checked.", exc)
                self.judge_problem = str(exc)
                self._judge = None
        return self._judge

    def ranked_windows(self, claim: str, passage_text: str) -> list[tuple[int, int, float]]:
        """(start, end, score) of every window of the passage, best first: the judge's similarity gate."""
        return [(m.start, m.end, m.score) for m in self.rank(claim, passage_text)]

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for ``texts`` (computed once per distinct text)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._vectors[text] = vector
        if not texts:
            return np.zeros((0, self.embedder.dimension), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])

    def windows(self, passage_text: str, pairs: bool = True) -> list[Window]:
        key = (passage_text, pairs)
        if key not in self._windows:
            self._windows[key] = quote_windows(passage_text, pairs=pairs)
        return self._windows[key]

    def rank(self, claim: str, passage_text: str, pairs: bool = True) -> list[Match]:
        """Every window of the passage scored against ``claim``, best first (``pairs``: also two-sentence windows)."""
        windows = self.windows(passage_text, pairs)
        if not windows:
            return []
        cleaned = strip_markers(claim)
        claim_vector = self.vectors([cleaned])[0]
        cosines = self.vectors([w.text for w in windows]) @ claim_vector
        claim_words = content_words(cleaned)
        matches = []
        for window, cosine in zip(windows, cosines, strict=True):
            share = overlap(claim_words, content_words(window.text))
            score = self.weight * float(cosine) + (1 - self.weight) * share
            matches.append(Match(score, float(cosine), share, window.start, window.end))
        matches.sort(key=lambda m: (-m.score, m.end - m.start))
        return matches

    def best(self, claim: str, passage_text: str) -> Match | None:
        """The best-supporting window of the passage, or None for an empty passage."""
        ranked = self.rank(claim, passage_text)
        return ranked[0] if ranked else None

    def supports(self, claim: str, passage_text: str) -> Match | None:
        """The best window when it clears the support threshold, else None."""
        match = self.best(claim, passage_text)
        return match if match is not None and match.score >= self.threshold else None
