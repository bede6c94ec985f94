"""The one sentence splitter, tuned for scientific prose, over text or over a stream of words.

Spans matter: a quote is always ``text[start:end]`` of the passage, so it is verbatim by
construction. Abbreviations (``et al.``, ``e.g.``, ``Fig.``), decimals and initials do not end a
sentence; a pattern the caller names (such as a citation marker after a full stop, ``... shown. [2]``)
stays with the sentence before. A line break before a capital ends a "sentence" when the line before
ends in a capitalised word or a number: that is how titles, author lines and headings sit in
extracted PDF text. It does so too after a footnote's own line ("1The source code for REVERB is
available at http:// reverb.cs.washington.edu/"), which a page sets between two paragraphs: ending in
a web address, it would otherwise run into the next sentence; and after a closing quotation mark,
where a quotation set apart from the text ends, often without a full stop. Two footnotes set on one line
("7pronounced “stork” 8The papers included ...") are two sentences: the second begins at its mark.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from engine.text.abbreviations import is_abbreviation
from engine.text.artefacts import glued_footnote_starts, opens_with_footnote_mark

# A candidate end: . ! or ? (optionally followed by closing quotes or brackets), then whitespace.
# A footnote's number glued after the stop ("(Equation 1).6 Starting from ...") ends the sentence too, when
# a letter or a bracket stands before the stop (so "in 3.5 Million" stays whole) and a capital or a digit follows.
# Chinese and Japanese end a sentence at 。！？ with no space after (and at ! or ? once ingest has folded
# the full-width marks, between two ideographs); Arabic asks with ؟, Hindi ends with the danda । (॥).
_END = re.compile(r"[.!?؟।॥]+[\"'”’)\]]*(?=\s)|(?<=[A-Za-z)\]])[.!?][\"'”’)\]]*\d{1,2}(?=\s+[A-Z0-9])"
                  r"|[。！？]+[\"'”’)\]」』）]*|(?<=[\u3040-\u30ff\u3400-\u9fff])[!?]+(?=[\u3040-\u30ff\u3400-\u9fff])"
                  r"|(?<=[^\s,;:(\-–])(?=\n[ \t]*[A-Z0-9])")
_WORD_END = re.compile(r"[.!?。！？؟।॥][\"'”’)\]」』）]*$")
# A quotation set apart ends at its closing mark when the next paragraph begins ("... by the source
# document”" / "We conduct ...").
_CLOSING_QUOTES = ("”", '"')
_END_CHARS = frozenset(".!?\"')]”’。！？؟।॥」』）")
_OPENERS = frozenset("([\"'“‘")


class Span(NamedTuple):
    start: int
    end: int


def split_spans(text: str, min_chars: int = 1, attached: re.Pattern[str] | None = None) -> list[Span]:
    """Sentence spans of ``text`` (leading/trailing whitespace excluded), in order.

    Runs of ``attached`` right after a sentence's end belong to that sentence.
    """
    trailing = re.compile(rf"(?:\s*(?:{attached.pattern}))+") if attached is not None else None
    spans: list[Span] = []
    start = 0
    for match in _END.finditer(text):
        end = match.end()
        if match.start() == end:  # a line break: a boundary only after a heading- or name-like line
            previous_word = text[:end].rsplit(None, 1)[-1] if text[:end].strip() else ""
            if not previous_word or (previous_word[0].islower() and not _footnote_line(text, end)
                                     and not previous_word.endswith(_CLOSING_QUOTES)):
                continue
            _append(text, start, end, spans)
            start = end
            continue
        if _ends_in_abbreviation(text, match.start()):
            continue
        nxt = _next_nonspace(text, end)
        if nxt is not None and text[nxt].islower():
            continue  # "... et al. showed" style continuations and lower-case after a stop
        if trailing is not None and (markers := trailing.match(text, end)):
            end = markers.end()
        _append(text, start, end, spans)
        start = end
    _append(text, start, len(text), spans)
    cuts = glued_footnote_starts(text)
    if cuts:
        spans = _cut(text, spans, cuts)
    return [s for s in spans if s.end - s.start >= min_chars]


def _cut(text: str, spans: list[Span], cuts: list[int]) -> list[Span]:
    """``spans`` with each one that holds a position of ``cuts`` (past its start) split there."""
    result: list[Span] = []
    for span in spans:
        start = span.start
        for cut in (c for c in cuts if span.start < c < span.end):
            _append(text, start, cut, result)
            start = cut
        _append(text, start, span.end, result)
    return result


def split_sentences(text: str, attached: re.Pattern[str] | None = None) -> list[str]:
    """The sentences of ``text``, as :func:`split_spans` finds them."""
    return [text[s.start:s.end] for s in split_spans(text, attached=attached)]


def ends_sentence(word: str) -> bool:
    """True when ``word``, one whitespace-separated token, closes a sentence (not an abbreviation or an initial)."""
    if not word or word[-1] not in _END_CHARS or not _WORD_END.search(word):
        return False
    return not (word.endswith(".") and is_abbreviation(word))


def starts_sentence(word: str) -> bool:
    """True when ``word`` can open a sentence: a capital, a digit or an opening bracket or quote."""
    first = word[:1]
    return first.isupper() or first.isdigit() or first in _OPENERS


def _ends_in_abbreviation(text: str, dot: int) -> bool:
    word_start = dot
    while word_start > 0 and (text[word_start - 1].isalnum() or text[word_start - 1] == "."):
        word_start -= 1
    word = text[word_start:dot].rstrip(".")
    if not word:
        return False
    if is_abbreviation(word):
        return True
    return bool(word.isdigit() and dot + 1 < len(text) and text[dot + 1].isdigit())  # a decimal: "3.5"


def _footnote_line(text: str, end: int) -> bool:
    """Whether the line that ends at ``end`` is a footnote's own text (it opens with the footnote's number)."""
    return opens_with_footnote_mark(text[text.rfind("\n", 0, end) + 1:end])


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
