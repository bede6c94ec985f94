"""Cutting a record's text into ~250-word passages that end on sentence boundaries.

The same rules as the PDF chunker (engine/ingest/chunk.py), on plain text: a passage ends at
the first sentence end once it has the target number of words, or at a word boundary when no
sentence ends before 1.6x the target (tables, lists, missing punctuation); a short tail joins
the passage before it. Passages are slices of the record's text, so the original spacing stays.
"""

from __future__ import annotations

import re

from engine.text.sentences import ends_sentence, starts_sentence

_WORD = re.compile(r"\S+")
HARD_LIMIT_FACTOR = 1.6
SHORT_TAIL_FACTOR = 0.3


def split_passages(text: str, target_words: int = 250) -> list[str]:
    """``text`` as passages of about ``target_words`` words; an empty text gives no passages."""
    words = [(match.start(), match.end(), match.group()) for match in _WORD.finditer(text)]
    if not words:
        return []
    hard_limit = max(target_words, int(target_words * HARD_LIMIT_FACTOR))
    spans: list[tuple[int, int]] = []  # (first word, one past the last word)
    first = 0
    count = len(words)
    for position in range(count):
        size = position - first + 1
        if size < target_words:
            continue
        at_end = ends_sentence(words[position][2]) and (
            position + 1 == count or starts_sentence(words[position + 1][2]))
        if at_end or size >= hard_limit:
            spans.append((first, position + 1))
            first = position + 1
    if first < count:
        if spans and count - first < target_words * SHORT_TAIL_FACTOR:
            spans[-1] = (spans[-1][0], count)
        else:
            spans.append((first, count))
    return [text[words[start][0]:words[end - 1][1]] for start, end in spans]
