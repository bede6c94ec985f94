"""Reference and footnote marks set as superscripts, cut from the words PyMuPDF glues them to.

Many journals cite by number in superscript ("as described⁴³.", "cells,⁶", "(ZO-1)²⁰"). PyMuPDF's
word extraction runs the raised digits into the word: "described43". The word then no longer
matches a search for "described", a quote shows "described43", and the judge's number checks see a
43 that the passage never states as a value. In 42 recent biology papers about 1,400 words carried
such a mark (docs/history/extraction.md).

Only digits count, with the commas and dashes of a list or range ("1,2,3", "19–24"), set raised: in a
span PyMuPDF flags as superscript, or a smaller one whose baseline sits above the line's. A mark is
cut where it cannot be part of what it follows: after a word of three or more letters with a small
letter among them, or after a closing bracket or a stop (not a lone 2 or 3 there: "(width)²"). So
exponents and formulas stay: "10⁶" (after a digit), "m²", "R²", "SE⁴³" (a short or all-capital word),
"cm⁻²", "Ca²⁺" (a sign), subscripts ("CO₂", "MnCl₂"), and the digits of a raised name ("amiR^CWC15").

A mark that opens a word is left: it is how a footnote's text starts ("⁷pronounced"), which is how the
page layout tells a footnote from the running text (engine/ingest/layout.py); what a reader sees drops
it (engine/text/artefacts.py).
"""

from __future__ import annotations

import re
from typing import Any

from engine.ingest.words import line_words

Word = tuple[Any, ...]  # (x0, y0, x1, y1, text, block_no, line_no, word_no) as PyMuPDF gives words

_SUPERSCRIPT = 1  # PyMuPDF's span flag
# A smaller span whose baseline sits this share of the text size above the line's is raised (PyMuPDF's own
# superscript flag compares a span with the one before it, so it never marks the first span of a line).
RAISED_BY = 0.2
_MARK_CHARS = frozenset("0123456789,–-")
# A word that may end with a glued mark: letters or a closing bracket or stop, then digits. Pages with no
# such word are not read a second time.
_GLUED = re.compile(r"(?:[a-z]{3}|[a-z][.,;:]|\))\d{1,3}(?:[,–-]\d{1,3})*[.,;:)\]]*$")
_CLOSING = ").,;:]"
_FOLLOWS = re.compile(r"(?:^|[^A-Za-z])([A-Za-z]{3,})$")


def may_have_marks(words: list[Word]) -> bool:
    """Whether any word looks like a word with a mark glued to it (a cheap look at the words' texts)."""
    return any(_GLUED.search(word[4]) for word in words)


def without_marks(words: list[Word], page_dict: dict[str, Any]) -> list[Word]:
    """``words`` with the superscript marks glued to them cut; boxes are kept as they are (a highlight
    may cover a mark). ``page_dict``: the page's ``dict`` extraction from the same text page. A word is
    changed only where the spans' characters are exactly the word's text."""
    kinds_of = _character_kinds(page_dict)
    if not kinds_of:
        return words
    out = []
    for word in words:
        found = kinds_of.get((word[5], word[6], word[7]))
        if found is not None and found[0] == word[4]:
            word = (*word[:4], cut_marks(*found), *word[5:])
        out.append(word)
    return out


# What a character of a word is: ordinary text, a raised digit, or another raised character (a raised name:
# "amiR^CWC15", whose digits belong to it).
TEXT, RAISED, RAISED_TEXT = 0, 1, 2


def cut_marks(text: str, kinds: list[int]) -> str:
    """``text`` without a raised mark glued to its end (closing punctuation after it kept). ``kinds``: the
    kind of each character (TEXT, RAISED or RAISED_TEXT)."""
    end = len(text)
    while end > 0 and text[end - 1] in _CLOSING and kinds[end - 1] != RAISED:
        end -= 1
    start = end
    while start > 0 and kinds[start - 1] == RAISED:
        start -= 1
    if 0 < start < end and any(c.isdigit() for c in text[start:end]) and kinds[start - 1] != RAISED_TEXT \
            and _mark_may_follow(text[:start], text[start:end]):
        return text[:start] + text[end:]
    return text


def _mark_may_follow(before: str, mark: str) -> bool:
    if not before:
        return False
    if before[-1] in _CLOSING:
        return mark.strip(",–-") not in ("2", "3")  # "(width)²" squares a bracket; "(ZO-1)²⁰" cites after one
    word = _FOLLOWS.search(before)
    return word is not None and any(c.islower() for c in word.group(1))


def _character_kinds(page_dict: dict[str, Any]) -> dict[tuple[int, int, int], tuple[str, list[int]]]:
    """(block, line, word) -> (text, each character's kind), for the words that hold a possible mark. Only
    lines with a raised span are read character by character (most lines have none)."""
    found: dict[tuple[int, int, int], tuple[str, list[int]]] = {}
    for block_no, block in enumerate(page_dict.get("blocks", [])):
        for line_no, line in enumerate(block.get("lines", [])):
            spans = line.get("spans", [])
            span_kinds = _span_kinds(spans)
            if not any(span_kinds):
                continue
            for word_no, text, owners in line_words(spans):
                kinds = [span_kinds[owner] if c in _MARK_CHARS else RAISED_TEXT if span_kinds[owner] == RAISED
                         else TEXT for c, owner in zip(text, owners, strict=True)]
                if any(kinds):
                    found[(block_no, line_no, word_no)] = (text, kinds)
    return found


def _span_kinds(spans: list[dict[str, Any]]) -> list[int]:
    """RAISED or TEXT for each span of a line, against the size and baseline of its longest span."""
    if len(spans) < 2:  # a mark is glued to something: a line of one span has none
        return [TEXT] * len(spans)
    text_span = max(spans, key=lambda span: len(span.get("text", "")))
    text_size, baseline = text_span.get("size", 0.0), text_span.get("origin", (0.0, 0.0))[1]
    kinds = []
    for span in spans:
        size = span.get("size", 0.0)
        raised = span.get("flags", 0) & _SUPERSCRIPT or (
            size < text_size and span.get("origin", (0.0, 0.0))[1] < baseline - RAISED_BY * text_size)
        kinds.append(RAISED if raised else TEXT)
    return kinds
