"""Plan: group the quotes into a few themes (sections of the answer) by embedding similarity.

Greedy and deterministic: quotes are taken best first; each joins the theme whose centroid it is
most similar to when that similarity clears ``join``, otherwise it opens a new theme (up to
``max_themes``, after which it joins the nearest). A theme is titled by the words its quotes
share most, which is enough for a heading and costs no LM call.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.cite.support import SupportScorer, content_words, stem
from engine.synthesis.evidence import Evidence, Quote

_SURFACE = re.compile(r"[^\W\d_][\w-]*", re.UNICODE)


@dataclass(frozen=True)
class Theme:
    title: str
    quotes: tuple[Quote, ...]

    @property
    def numbers(self) -> list[int]:
        return list(dict.fromkeys(q.n for q in self.quotes))


def plan_themes(question: str, evidence: Sequence[Evidence], scorer: SupportScorer, max_themes: int = 3,
                join: float = 0.45, max_quotes: int = 12) -> list[Theme]:
    """Themes over the best ``max_quotes`` quotes; themes ordered by their best quote."""
    # Every relevant passage's best quote first, then second-best quotes: the plan covers the
    # papers retrieval found instead of filling up with one paper's many good sentences.
    ranked = sorted(evidence, key=lambda e: -e.relevance)
    rounds = max((len(e.quotes) for e in ranked), default=0)
    quotes = [e.quotes_by_score[r] for r in range(rounds) for e in ranked if r < len(e.quotes)][:max_quotes]
    if not quotes:
        return []
    vectors = scorer.vectors([q.text for q in quotes])
    members: list[list[int]] = []
    centroids: list[np.ndarray] = []
    for index, vector in enumerate(vectors):
        similarities = [float(c @ vector / (np.linalg.norm(c) or 1.0)) for c in centroids]
        best = int(np.argmax(similarities)) if similarities else -1
        if best >= 0 and (similarities[best] >= join or len(members) >= max_themes):
            members[best].append(index)
            centroids[best] = centroids[best] + vector
        else:
            members.append([index])
            centroids.append(vector.copy())
    question_words = content_words(question)
    groups = [[quotes[i] for i in group] for group in members]
    return [Theme(_title(group, groups, question_words), tuple(group)) for group in groups]


def _title(group: list[Quote], groups: list[list[Quote]], question_words: set[str]) -> str:
    """The three words most frequent in this theme relative to the others (question words count too)."""
    surface: dict[str, Counter[str]] = {}
    counts: Counter[str] = Counter()
    for quote in group:
        seen = set()
        for word in _SURFACE.findall(quote.text):
            key = stem(word.lower())
            if key not in content_words(word) or key in seen:
                continue
            seen.add(key)
            counts[key] += 1
            surface.setdefault(key, Counter())[word if word.isupper() else word.lower()] += 1
    elsewhere: Counter[str] = Counter()
    for other in groups:
        if other is not group:
            for quote in other:
                elsewhere.update(content_words(quote.text))
    ranked = sorted(counts, key=lambda k: (-(counts[k] - 0.5 * elsewhere[k] + 0.5 * (k in question_words)),
                                           -len(k), k))
    words = [surface[k].most_common(1)[0][0] for k in ranked[:3]]
    return ", ".join(words).capitalize() if words else "Evidence"
