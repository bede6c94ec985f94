"""Sentence splitting with character spans, tuned for scientific prose.

Spans matter: a quote is always ``text[start:end]`` of the passage, so it is verbatim by
construction. Abbreviations (``et al.``, ``e.g.``, ``Fig.``), decimals and initials do not end a
sentence; citation markers after a full stop (``... shown. [2]``) stay with the sentence before.
A line break before a capital ends a "sentence" when the line before ends in a capitalised word
or a number: that is how titles, author lines and headings sit in extracted PDF text.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from engine.cite.markers import MARKER

_ABBREVIATIONS = frozenset("""
al e.g eg i.e ie etc fig figs eq eqs sec secs tab vs cf approx resp no nos vol pp p ch dr mr ms prof
st jr sr inc ltd co corp dept univ ref refs def thm lem prop cor alg appx app ca viz
""".split())

# A candidate end: . ! or ? (optionally followed by closing quotes or brackets), then whitespace.
_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s)|(?<=[^\s,;:(\-–])(?=\n[ \t]*[A-Z0-9])")
_LEADING_MARKERS = re.compile(rf"(?:\s*{MARKER.pattern})+")


class Span(NamedTuple):
    start: int
    end: int


def split_spans(text: str, min_chars: int = 1) -> list[Span]:
    """Sentence spans of ``text`` (leading/trailing whitespace excluded), in order."""
    spans: list[Span] = []
    start = 0
    for match in _END.finditer(text):
        end = match.end()
        if match.start() == end:  # a line break: a boundary only after a heading- or name-like line
            previous_word = text[:end].rsplit(None, 1)[-1] if text[:end].strip() else ""
            if not previous_word or previous_word[0].islower():
                continue
            _append(text, start, end, spans)
            start = end
            continue
        if _is_abbreviation(text, match.start()):
            continue
        nxt = _next_nonspace(text, end)
        if nxt is not None and text[nxt].islower():
            continue  # "... et al. showed" style continuations and lower-case after a stop
        markers = _LEADING_MARKERS.match(text, end)
        if markers:
            end = markers.end()
        _append(text, start, end, spans)
        start = end
    _append(text, start, len(text), spans)
    return [s for s in spans if s.end - s.start >= min_chars]


def split_sentences(text: str) -> list[str]:
    return [text[s.start:s.end] for s in split_spans(text)]


def _is_abbreviation(text: str, dot: int) -> bool:
    word_start = dot
    while word_start > 0 and (text[word_start - 1].isalnum() or text[word_start - 1] == "."):
        word_start -= 1
    word = text[word_start:dot].lower().rstrip(".")
    if not word:
        return False
    if word in _ABBREVIATIONS:
        return True
    if len(word) == 1 and word.isalpha():  # an initial: "J. Smith"
        return True
    return bool(word.isdigit() and dot + 1 < len(text) and text[dot + 1].isdigit())


def _next_nonspace(text: str, index: int) -> int | None:
    while index < len(text) and text[index].isspace():
        index += 1
    return index if index < len(text) else None


def _append(text: str, start: int, end: int, spans: list[Span]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append(Span(start, end))
