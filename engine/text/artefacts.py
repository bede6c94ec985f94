"""Footnote marks that PDF extraction glues to the words around them, removed from text a reader sees.

A footnote's number is set small and raised; extracted as plain text it runs into its neighbour:
"7pronounced “stork” 8The papers …" (footnotes 7 and 8 before their sentences), "over 20 million
papers,10 meaningful citations" (footnote 10 after a comma), "5It is also possible ..." (a footnote's own
text opening with its number), "... on the benchmark.1" (a mark after the full stop, where a quote ends).
Quoted in an answer, such a digit reads as part of the claim, and a number check then looks for a "10"
that the passage never states as a value.

Only shapes that a written number or a unit never takes are cut, so "3D", "5x", "10mg", "2nd",
"1,000" and "p53" stay as they are; so do a figure's panel ("Figure 1Aii") and a tag of amino acids
("6His-tagged").

Two footnotes set on one line run together ("7pronounced “stork” 8The papers ..."): a mark glued to a
capitalised word after a space opens the next footnote, and :func:`glued_footnote_starts` tells the sentence
splitter where.
"""

from __future__ import annotations

import re

# Letters a number may carry without a space: units, ordinals, multipliers ("10mg", "2nd", "5x", "12kDa").
_UNITS = frozenset("""
st nd rd th x k m b s d h min sec hr hrs mg ml mm cm km kg g ng ug mol mmol nmol umol kda bp kb mb gb tb hz khz mhz
ghz ms ns us mw kw w v mv ma nm um ppm ppb fold mer kbp mbp gbp kbps mbps gbps
""".split())
# One or two digits glued to the front of a word of three or more letters ("7pronounced", "8The").
_BEFORE_WORD = re.compile(r"(?<![\w.,\-/])(\d{1,2})(?=([A-Za-z][a-z]{2,})\b)")
# The same before a two-letter word that opens a sentence ("5It is", "3We use"); only these words, because a
# number before a capitalised two-letter word is also how an isotope is written ("4He", "56Fe").
_BEFORE_SHORT_WORD = re.compile(r"(?<![\w.,\-/])(\d{1,2})(?=(?:It|We|In|As|An|At|On|To|If|By|Of|So)\s[a-z])")
# One or two digits glued after a word's comma or full stop and followed by a space or the end of the text
# ("papers,10 meaningful", a quote ending "on the benchmark.1").
_AFTER_PUNCTUATION = re.compile(r"(?<=[a-z]{3}[,.;])\d{1,2}(?=\s|$)")
# Words a number belongs to when it follows them: "Figure 1Aii" is panel Aii of Figure 1, not a footnote.
_LABELS = frozenset("""
figure figures fig figs table tables tab section sec equation eq eqs step appendix chapter panel box scheme movie
video file note supplementary extended
""".split())
# Amino acids' three-letter codes: "6His", "10Gly" count residues.
_AMINO_ACIDS = frozenset("ala arg asn asp cys gln glu gly his ile leu lys met phe pro ser thr trp tyr val".split())
# A mark after a space, glued to a capitalised word: where a footnote set on the same line as another begins.
_NEXT_FOOTNOTE = re.compile(r"(?<=\s)\d{1,2}(?=([A-Z][a-z]{2,}|It|We|In|As|An|At|On|To|If|By|Of|So)\b)")


def _mark_removed(match: re.Match[str]) -> str:
    """Nothing where a mark stood, or a space where it joined two words ("8The papers"), so that two
    sentences do not run together."""
    return " " if match.start() > 0 and not match.string[match.start() - 1].isspace() else ""


def _glued_mark(word: str) -> bool:
    """Whether a number glued before ``word`` is a footnote's mark: not a unit ("10mg"), an isotope ("56Fe") or
    a count of amino acids ("6His")."""
    return (word.lower() not in _UNITS and word.lower() not in _AMINO_ACIDS
            and not (word[0].isupper() and word[1:].isupper()) and not word.startswith("X"))  # "1Xprotease": 1x


def _after_label(text: str, position: int) -> bool:
    """Whether the word before ``position`` (over spaces) names what a number counts: "Figure 1Aii"."""
    before = text[:position].rstrip()
    words = before.rsplit(None, 1)
    return bool(words) and words[-1].strip("([{.,;:").lower() in _LABELS


def glued_footnote_starts(text: str) -> list[int]:
    """Where a footnote set after another on the same line begins ("... “stork” 8The papers ..." -> the
    "8"): a mark after a space glued to a capitalised word, not a figure's panel or a count of residues."""
    return [m.start() for m in _NEXT_FOOTNOTE.finditer(text)
            if _glued_mark(m.group(1)) and not _after_label(text, m.start())]


def without_footnote_marks(text: str) -> str:
    """``text`` with footnote numbers that extraction glued to a neighbouring word removed."""
    def before_word(match: re.Match[str]) -> str:
        keep = not _glued_mark(match.group(2)) or _after_label(match.string, match.start())
        return match.group(0) if keep else _mark_removed(match)

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
