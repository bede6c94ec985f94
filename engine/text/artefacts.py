"""Footnote marks that PDF extraction glues to the words around them, removed from text a reader sees.

A footnote's number is set small and raised; extracted as plain text it runs into its neighbour:
"7pronounced “stork” 8The papers …" (footnotes 7 and 8 before their sentences), "over 20 million
papers,10 meaningful citations" (footnote 10 after a comma), "5It is also possible ..." (a footnote's own
text opening with its number), "... on the benchmark.1" (a mark after the full stop, where a quote ends).
Quoted in an answer, such a digit reads as part of the claim, and a number check then looks for a "10"
that the passage never states as a value.

Only shapes that a written number or a unit never takes are cut, so "3D", "5x", "10mg", "2nd",
"1,000" and "p53" stay as they are.
"""

from __future__ import annotations

import re

# Letters a number may carry without a space: units, ordinals, multipliers ("10mg", "2nd", "5x", "12kDa").
_UNITS = frozenset("""
st nd rd th x k m b s d h min sec hr hrs mg ml mm cm km kg g ng ug mol mmol nmol umol kda bp kb mb gb tb hz khz mhz
ghz ms ns us mw kw w v mv ma nm um ppm ppb fold mer
""".split())
# One or two digits glued to the front of a word of three or more letters ("7pronounced", "8The").
_BEFORE_WORD = re.compile(r"(?<![\w.,\-/])(\d{1,2})(?=([A-Za-z][a-z]{2,})\b)")
# The same before a two-letter word that opens a sentence ("5It is", "3We use"); only these words, because a
# number before a capitalised two-letter word is also how an isotope is written ("4He", "56Fe").
_BEFORE_SHORT_WORD = re.compile(r"(?<![\w.,\-/])(\d{1,2})(?=(?:It|We|In|As|An|At|On|To|If|By|Of|So)\s[a-z])")
# One or two digits glued after a word's comma or full stop and followed by a space or the end of the text
# ("papers,10 meaningful", a quote ending "on the benchmark.1").
_AFTER_PUNCTUATION = re.compile(r"(?<=[a-z]{3}[,.;])\d{1,2}(?=\s|$)")


def _mark_removed(match: re.Match[str]) -> str:
    """Nothing where a mark stood, or a space where it joined two words ("8The papers"), so that two
    sentences do not run together."""
    return " " if match.start() > 0 and not match.string[match.start() - 1].isspace() else ""


def _glued_mark(word: str) -> bool:
    """Whether a number glued before ``word`` is a footnote's mark: not a unit ("10mg") or an isotope ("56Fe")."""
    return word.lower() not in _UNITS and not (word[0].isupper() and word[1:].isupper())


def without_footnote_marks(text: str) -> str:
    """``text`` with footnote numbers that extraction glued to a neighbouring word removed."""
    def before_word(match: re.Match[str]) -> str:
        return _mark_removed(match) if _glued_mark(match.group(2)) else match.group(0)

    cleaned = _BEFORE_SHORT_WORD.sub(_mark_removed, _BEFORE_WORD.sub(before_word, text))
    return _AFTER_PUNCTUATION.sub("", cleaned)


def opens_with_footnote_mark(line: str) -> bool:
    """Whether ``line`` opens with a footnote's number glued to its first word ("1The source code for ...",
    "5It is also possible ..."): the line is a footnote's own text, set apart from the prose around it."""
    text = line.lstrip()
    glued = _BEFORE_WORD.match(text)
    if glued:
        return glued.group(2)[0].isupper() and _glued_mark(glued.group(2))
    return bool(_BEFORE_SHORT_WORD.match(text))


def as_shown(quote: str) -> str:
    """A verbatim quote as a reader sees it: glued footnote numbers left out, whitespace (line breaks of the
    PDF's layout) made single spaces. The verbatim text stays with the citation, for the highlight."""
    return " ".join(without_footnote_marks(quote).split())
