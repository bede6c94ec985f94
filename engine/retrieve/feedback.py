"""Pseudo-relevance feedback (RM3-style) for BM25: expand the query with words the top hits share.

The first round's best passages are assumed relevant; words frequent in them (and not already in
the query, nor stop words) become an expanded keyword query whose BM25 ranking is fused with the
others. Without corpus statistics at hand, a word's weight is its summed relative frequency in
the feedback passages times the number of passages it appears in, which favours topical words
shared by several passages over one passage's idiosyncrasies.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from engine.text.stopwords import QUESTION_WORDS, SCIENCE_WORDS, STOP_WORDS

_WORD = re.compile(r"[^\W\d_][^\W_]{2,}", re.UNICODE)  # 3+ characters, not starting with a digit
def expansion_terms(texts: Sequence[str], query_terms: Iterable[str], count: int = 10) -> list[str]:
    """Up to ``count`` feedback words from ``texts`` that are not in the query, best first."""
    known = set(query_terms)
    weights: dict[str, float] = {}
    documents: Counter[str] = Counter()
    for text in texts:
        words = [w.lower() for w in _WORD.findall(text)]
        if not words:
            continue
        counts = Counter(w for w in words if w not in STOP_WORDS and w not in QUESTION_WORDS
                         and w not in SCIENCE_WORDS and w not in known)
        for word, n in counts.items():
            weights[word] = weights.get(word, 0.0) + n / len(words)
            documents[word] += 1
    shared = 1 if len(texts) == 1 else 2  # one passage's own jargon is not evidence
    scored = {word: weight * documents[word] for word, weight in weights.items() if documents[word] >= shared}
    return [word for word, _ in sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:count]]
