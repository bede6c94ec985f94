"""The one stemmer: Porter's algorithm, the same one the FTS5 index applies (``tokenize='porter'``).

Search stems through SQLite and support checking through this module; both must reduce a word to
the same stem, or a claim and the passage it was found by would disagree about their words.
Snowball's "porter" is Martin Porter's original algorithm, which FTS5 implements too; FTS5 leaves
words of one or two characters alone, and so does :func:`stem`.
"""

from __future__ import annotations

from functools import lru_cache

import snowballstemmer

_PORTER = snowballstemmer.stemmer("porter")
_SHORTEST_STEMMED = 3  # FTS5's porter tokenizer passes shorter words through unchanged


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Porter stem of a lower-case ``word`` ("embeddings" and "embedding" -> "embed")."""
    if len(word) < _SHORTEST_STEMMED:
        return word
    return str(_PORTER.stemWord(word))
