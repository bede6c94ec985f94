"""Plan: group the quotes into a few themes (sections of the answer) by embedding similarity.

Quotes start grouped by paper (a paper's quotes usually make one point about it); groups are then
merged, most similar first (average cosine of their quotes), while the similarity clears ``join``
or while there are more than ``max_themes``. Deterministic and LM-free. A one-paper theme is
titled by the paper's short title ("SPECTER"); a mixed theme by the words its quotes share most.
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


def select_quotes(evidence: Sequence[Evidence], max_quotes: int) -> list[Quote]:
    """Every relevant passage's best quote first, then second-best ones: the plan covers the papers
    retrieval found instead of filling up with one paper's many good sentences."""
    ranked = sorted(evidence, key=lambda e: -e.relevance)
    rounds = max((len(e.quotes) for e in ranked), default=0)
    return [e.quotes_by_score[r] for r in range(rounds) for e in ranked if r < len(e.quotes)][:max_quotes]


def plan_themes(question: str, evidence: Sequence[Evidence], scorer: SupportScorer, max_themes: int = 3,
                join: float = 0.55, max_quotes: int = 12) -> list[Theme]:
    """Themes over the selected quotes, ordered by their best quote."""
    quotes = select_quotes(evidence, max_quotes)
    if not quotes:
        return []
    doc_of = {e.reference.n: e.reference.doc_id for e in evidence}
    titles = {e.reference.doc_id: e.reference.title for e in evidence}
    vectors = scorer.vectors([q.text for q in quotes])
    groups: list[list[int]] = []
    by_doc: dict[str, int] = {}
    for index, quote in enumerate(quotes):
        doc = doc_of.get(quote.n, str(quote.n))
        if doc not in by_doc:
            by_doc[doc] = len(groups)
            groups.append([])
        groups[by_doc[doc]].append(index)
    similarity = vectors @ vectors.T
    while len(groups) > 1:
        best, pair = -2.0, (0, 1)
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                link = float(np.mean(similarity[np.ix_(groups[a], groups[b])]))
                if link > best:
                    best, pair = link, (a, b)
        if best < join and len(groups) <= max_themes:
            break
        a, b = pair
        groups[a] = sorted(groups[a] + groups[b])
        del groups[b]
    groups.sort(key=lambda g: min(g))  # quotes are in selection order: best first
    question_words = content_words(question)
    themes = []
    for group in groups:
        members = [quotes[i] for i in group]
        docs = {doc_of.get(q.n, "") for q in members}
        if len(docs) == 1:
            title = short_title(titles.get(next(iter(docs)), "")) or _keywords(members, groups, quotes, question_words)
        else:
            title = _keywords(members, groups, quotes, question_words)
        themes.append(Theme(title, tuple(members)))
    return themes


def short_title(title: str) -> str:
    """"SPECTER: Document-level ..." -> "SPECTER"; long titles are cut at a word boundary."""
    head = " ".join(title.split(":", 1)[0].split())
    if len(head) <= 60:
        return head
    return head[:60].rsplit(" ", 1)[0] + "…"


def _keywords(group: list[Quote], groups: list[list[int]], quotes: list[Quote], question_words: set[str]) -> str:
    """The three words most frequent in this theme relative to the others (question words count too)."""
    surface: dict[str, Counter[str]] = {}
    counts: Counter[str] = Counter()
    for quote in group:
        seen: set[str] = set()
        for word in _SURFACE.findall(quote.text):
            key = stem(word.lower())
            if key not in content_words(word) or key in seen:
                continue
            seen.add(key)
            counts[key] += 1
            surface.setdefault(key, Counter())[word if word.isupper() else word.lower()] += 1
    elsewhere: Counter[str] = Counter()
    members = set(map(id, group))
    for quote in quotes:
        if id(quote) not in members:
            elsewhere.update(content_words(quote.text))
    ranked = sorted(counts, key=lambda k: (-(counts[k] - 0.5 * elsewhere[k] + 0.5 * (k in question_words)),
                                           -len(k), k))
    words = [surface[k].most_common(1)[0][0] for k in ranked[:3]]
    return ", ".join(words).capitalize() if words else "Evidence"
