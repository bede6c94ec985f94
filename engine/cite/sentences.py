"""Sentences of an answer or a passage, with the citation markers after a full stop kept on them.

The splitting is :mod:`engine.text.sentences`'; what is cite's own is that ``... shown. [2]`` keeps
its marker with the sentence before, so a quote and the claim it backs stay together.
"""

from __future__ import annotations

from engine.cite.markers import MARKER
from engine.text import sentences as _text
from engine.text.sentences import Span

__all__ = ["Span", "split_sentences", "split_spans"]


def split_spans(text: str, min_chars: int = 1) -> list[Span]:
    """Sentence spans of ``text`` (leading/trailing whitespace excluded), in order."""
    return _text.split_spans(text, min_chars, attached=MARKER)


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, each with the markers that follow its full stop."""
    return _text.split_sentences(text, attached=MARKER)
