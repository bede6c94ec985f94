"""Sentences of an answer or a passage, with the citation markers after a full stop kept on them.

The splitting is :mod:`engine.text.sentences`'; what is cite's own is that ``... shown. [2]`` keeps
its marker with the sentence before, so a quote and the claim it backs stay together, and that a list's
item number ("are: 1. A syntactic constraint") opens its item instead of closing the lead-in: "…are:
1." would otherwise be judged as a claim about the number 1.
"""

from __future__ import annotations

import re

from engine.cite.markers import MARKER
from engine.text import sentences as _text
from engine.text.sentences import Span

__all__ = ["Span", "split_sentences", "split_spans"]


# A list item's number at the end of a span: "are: 1." or a lone "2." between two items.
_ITEM_NUMBER = re.compile(r"(?:^|(?<=\s))\(?\d{1,2}[.)]$")


def split_spans(text: str, min_chars: int = 1) -> list[Span]:
    """Sentence spans of ``text`` (leading/trailing whitespace excluded), in order; a list item's number
    moves from the end of the span before it to the start of its item."""
    spans = _text.split_spans(text, min_chars, attached=MARKER)
    moved: list[Span] = []
    carry: int | None = None  # where an item number that opens the next span starts
    for span in spans:
        start = span.start if carry is None else carry
        carry = None
        number = _ITEM_NUMBER.search(text, start, span.end)
        head = text[start:number.start()].rstrip() if number is not None else ""
        # Only after a lead-in's colon or alone: "The value was 2." ends with its own number.
        if number is not None and span is not spans[-1] and (not head or head.endswith(":")):
            carry = number.start()
            if head:
                moved.append(Span(start, start + len(head)))
            continue
        moved.append(Span(start, span.end))
    return moved


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, each with the markers that follow its full stop."""
    return [text[span.start:span.end] for span in split_spans(text)]
