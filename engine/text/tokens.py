"""What counts as a word: the patterns every tokenising caller shares."""

from __future__ import annotations

import re

# Letters and digits, as FTS5's unicode61 tokenizer splits them ("COVID-19" -> "COVID", "19").
WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Letters only: words that can be spelt, counted as English or corrected.
LETTERS = re.compile(r"[^\W\d_]+", re.UNICODE)
# A word, or a number with its decimal part kept whole ("3.5", "1,200"): claims must keep their figures.
WORD_OR_NUMBER = re.compile(r"[^\W_]+(?:[.,]\d+)?", re.UNICODE)


def lower_words(text: str, pattern: re.Pattern[str] = WORD) -> list[str]:
    """The words of ``text`` lower-cased, in order."""
    return [word.lower() for word in pattern.findall(text)]
