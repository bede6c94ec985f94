"""BM25 over a paper's sentences, with the product's stemmer and stop words; light enough (no search index,
no models) for a training run on a machine that has only the engine's text helpers."""

from __future__ import annotations

import math
import re
from collections import Counter

from engine.text.stem import stem
from engine.text.stopwords import STOP_WORDS


def words(text: str) -> list[str]:
    return [stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP_WORDS]


def bm25_order(question: str, texts: list[str]) -> list[int]:
    """Indexes of ``texts`` by BM25 against ``question``, the texts being the collection."""
    scores = bm25_scores(question, texts)
    return sorted(range(len(texts)), key=lambda i: -scores[i])


def bm25_scores(question: str, texts: list[str]) -> list[float]:
    """BM25 of each of ``texts`` against ``question``, the texts being the collection."""
    scores = Bm25(texts).scores(question)
    return [scores.get(i, 0.0) for i in range(len(texts))]


class Bm25:
    """A collection of texts, tokenized once, that scores questions by BM25 (k1 1.2, b 0.75)."""

    def __init__(self, texts: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.docs = [Counter(words(t)) for t in texts]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.average = sum(self.lengths) / max(1, len(self.docs))
        self.postings: dict[str, list[int]] = {}
        for i, doc in enumerate(self.docs):
            for word in doc:
                self.postings.setdefault(word, []).append(i)
        self.k1, self.b = k1, b

    def scores(self, question: str) -> dict[int, float]:
        """The score of every text sharing a word with ``question`` (the others score 0)."""
        result: dict[int, float] = {}
        for w in set(words(question)):
            holding = self.postings.get(w, [])
            idf = math.log(1 + (len(self.docs) - len(holding) + 0.5) / (len(holding) + 0.5))
            for i in holding:
                count = self.docs[i][w]
                norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.average)
                result[i] = result.get(i, 0.0) + idf * count * (self.k1 + 1) / (count + norm)
        return result
