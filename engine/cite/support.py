"""Does a passage support a sentence? A scorer that never asks the generating LM.

The score mixes two signals over the passage's sentences (and pairs of adjacent sentences):
the cosine similarity of sentence embeddings (a small sentence-transformers model) and the
share of the claim's content words found in the window (numbers count: "3.5" must be there).
The best window becomes the citation's quote. The mixing weight and the thresholds were fitted
on hand-labelled (sentence, passage) pairs from the real corpus (tests/data/support_pairs.jsonl,
fitted by benchmarks/answers.py pairs); precision and recall are in docs/numbers.md.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.cite.judge import SupportJudge, default_judge
from engine.cite.markers import strip_markers
from engine.cite.reader import AnswerReader, default_reader
from engine.cite.windows import Window, content_words, overlap, quote_windows
from engine.embed.base import Embedder
from engine.errors import ModelNotFoundError
from engine.tuning import CITATION

log = logging.getLogger(__name__)

# Fitted on tests/data/support_pairs.jsonl with the packaged all-MiniLM-L6-v2; what each does and where it
# was measured: engine/tuning.py.
EMBEDDING_WEIGHT = CITATION.embedding_weight
SUPPORT_THRESHOLD = CITATION.support_threshold  # keep a citation the model made
INSERT_THRESHOLD = CITATION.insert_threshold  # attach a citation the model did not make: the engine's claim


@dataclass(frozen=True)
class Match:
    """How well one window supports (or answers) a claim."""

    score: float
    cosine: float
    overlap: float
    start: int
    end: int


class SupportScorer:
    """Scores claims against passage windows; embeddings are cached per text for the scorer's life.

    ``judge`` is the entailment judge verification asks first (engine/cite/verify.py): "shipped"
    (the default) loads the judge packaged with Quire on first use, None keeps the similarity
    thresholds alone, or pass a ``SupportJudge``. ``reader`` is the answer reader that ranks a
    passage's sentences by how well they answer a question (engine/synthesis/evidence.py), the same
    way: "shipped", None (the hand-weighted answer score alone) or an ``AnswerReader``.
    """

    def __init__(self, embedder: Embedder, weight: float = EMBEDDING_WEIGHT, threshold: float = SUPPORT_THRESHOLD,
                 insert_threshold: float = INSERT_THRESHOLD, judge: SupportJudge | str | None = "shipped",
                 reader: AnswerReader | str | None = "shipped") -> None:
        self.embedder = embedder
        self.weight = weight
        self.threshold = threshold
        self.insert_threshold = insert_threshold
        self._judge = judge
        self.judge_problem = ""  # why the shipped judge could not be loaded, if it could not
        self._reader = reader
        self.reader_problem = ""  # why the shipped answer reader could not be loaded, if it could not
        self._vectors: dict[str, np.ndarray] = {}
        self._windows: dict[tuple[str, bool], list[Window]] = {}

    def support_judge(self) -> SupportJudge | None:
        """The entailment judge, loaded on first use; None when there is none. When the shipped judge
        cannot be loaded, ``judge_problem`` says why and verification marks citations "not checked"
        rather than deciding by similarity (a similar sentence is not a supported one)."""
        if isinstance(self._judge, str):
            try:
                self._judge = default_judge()
            except ModelNotFoundError as exc:
                log.warning("%s Citations are shown as written, marked as not checked.", exc)
                self.judge_problem = str(exc)
                self._judge = None
        return self._judge

    def answer_reader(self) -> AnswerReader | None:
        """The answer reader, loaded on first use; None when there is none (``reader_problem`` says why):
        evidence is then ranked by the hand-weighted answer score, as before the reader existed."""
        if isinstance(self._reader, str):
            try:
                self._reader = default_reader()
            except ModelNotFoundError as exc:
                log.warning("%s Sentences are ranked without it.", exc)
                self.reader_problem = str(exc)
                self._reader = None
        return self._reader

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

    def rank(self, claim: str, passage_text: str, pairs: bool = True, about: str = "") -> list[Match]:
        """Every window of the passage scored against ``claim``, best first (``pairs``: also two-sentence windows).
        ``about``: what the whole passage is about (its paper's title), whose words count as in every window."""
        windows = self.windows(passage_text, pairs)
        if not windows:
            return []
        cleaned = strip_markers(claim)
        claim_vector = self.vectors([cleaned])[0]
        cosines = self.vectors([w.text for w in windows]) @ claim_vector
        claim_words = content_words(cleaned)
        shared = content_words(about) if about else set()
        matches = []
        for window, cosine in zip(windows, cosines, strict=True):
            share = overlap(claim_words, content_words(window.text) | shared)
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
