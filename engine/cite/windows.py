"""Windows of a passage and the words they are compared by: what the similarity scorer, the support
judge and the checks all read.

A window is a sentence of the passage, or two adjacent ones when short enough, cut at spaces when a
sentence runs long; front matter (title and author lines) never becomes one. A claim's content words
are its stemmed words less function words and words that only frame a claim ("shows", "paper").
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from engine.cite.markers import strip_markers
from engine.cite.sentences import Span, split_spans
from engine.text.back_matter import is_reference_entry
from engine.text.keywords import UNSPACED_TEXT, script_words, split_words
from engine.text.scripts import word_script
from engine.text.stem import stem
from engine.text.stopwords import CLAIM_FRAMING_WORDS, COMMON_ENGLISH_WORDS, STOP_WORDS
from engine.text.tokens import WORD_OR_NUMBER, lower_words

MAX_QUOTE_CHARS = 320

# What a claim's words are checked against: neither function words nor words that only frame it.
_NOT_CONTENT = STOP_WORDS | CLAIM_FRAMING_WORDS

# How a sentence ends: a closing mark, perhaps a closing quote or bracket, perhaps a citation number after it.
_SENTENCE_END = re.compile(r"[.!?)\]”\"’'。！？؟।]\s*(?:\[\d+(?:[,–-]\s*\d+)*\])?$")
_NOT_LATIN = re.compile(r"[^\x00-\u024f]")  # a character past Latin Extended-B: maybe a word of another script
PROSE_FUNCTION_SHARE = 0.10  # prose has 30-50 % ("the", "of", "and", "is", "we" ...); tables and equations ~0


def content_words(text: str) -> set[str]:
    """Lower-cased, stemmed words that carry meaning (stop words and markers removed).

    Words in another script than Latin are those of keyword search: a Chinese clause cut into its words,
    an Arabic or Russian word stemmed as its language stems it (engine/text/keywords.py). Porter alone
    left a Chinese clause one "word" and "البانثرز" apart from "بانثرز", so a question in those languages
    shared no word with the sentence that answers it."""
    text = strip_markers(text)
    words = lower_words(text, WORD_OR_NUMBER)
    found = {stem(w) for w in words if w not in _NOT_CONTENT and (len(w) > 2 or w.isdigit())
             and word_script(w) in ("latin", "other")}
    return found | script_words(text) if _NOT_LATIN.search(text) else found


def overlap(claim_words: set[str], window_words: set[str]) -> float:
    """Share of the claim's content words that the window contains."""
    return len(claim_words & window_words) / len(claim_words) if claim_words else 0.0


@dataclass(frozen=True)
class Window:
    """A candidate quote: ``text[start:end]`` of a passage."""

    start: int
    end: int
    text: str


def quote_windows(passage_text: str, max_chars: int = MAX_QUOTE_CHARS, pairs: bool = True) -> list[Window]:
    """Single sentences and (with ``pairs``) adjacent pairs when short enough; over-long sentences are
    cut at spaces. Front matter (title and author lines) is not prose and never becomes a quote, nor does an
    entry of a reference list left in the running text."""
    sentences: list[Span] = []
    for span in split_spans(passage_text):
        sentences.extend(_cut_long(passage_text, span, max_chars))
    sentences = [s for s in sentences if prose_like(passage_text[s.start:s.end])]
    windows = [Window(s.start, s.end, passage_text[s.start:s.end]) for s in sentences]
    for first, second in itertools.pairwise(sentences if pairs else []):
        if second.end - first.start <= max_chars and not passage_text[first.end:second.start].strip():
            windows.append(Window(first.start, second.end, passage_text[first.start:second.end]))
    return windows


def prose_like(text: str) -> bool:
    """At least six words, mostly lower-case, and not an entry of a reference list left in the running text: rules
    out headings, author lists, tables of numbers and other papers' titles."""
    words = [w for w in (split_words(text) if UNSPACED_TEXT.search(text) else text.split())
             if any(c.isalpha() for c in w)]
    if len(words) < 6:
        return False
    # A letter of a script without case (Arabic, Chinese, Devanagari) counts as a small one.
    small = sum(w[0].islower() or (w[0].isalpha() and not w[0].isupper()) for w in words)
    return small >= 0.45 * len(words) and not is_reference_entry(text)


def not_prose(text: str) -> bool:
    """A table, an equation, code or a figure's labels that extraction ran together into one "sentence": it does
    not end as a sentence does, and under a tenth of its words are English function words ("Citation contexts
    References to tables / figures / equations Linked to graph ... S2ORC (PDF-parse) 8.1M full text yes ...").
    Either alone is not enough: terse biology ("Thus, EPRS1 blocked PCBP2-mediated MAVS ubiquitination ...") has
    few function words, and a long sentence cut at a clause break has no full stop."""
    flat = " ".join(text.split())
    if _SENTENCE_END.search(flat):
        return False
    words = [w.strip(".,;:()[]{}\"'“”‘’").lower() for w in flat.split()]
    return sum(w in COMMON_ENGLISH_WORDS for w in words) < PROSE_FUNCTION_SHARE * len(words)


def _cut_long(text: str, span: Span, max_chars: int) -> list[Span]:
    pieces: list[Span] = []
    start = span.start
    while span.end - start > max_chars:
        cut = text.rfind(" ", start + max_chars // 2, start + max_chars)
        cut = cut if cut > start else start + max_chars
        pieces.append(Span(start, cut))
        start = cut + 1
    if span.end > start:
        pieces.append(Span(start, span.end))
    return pieces
