"""Word-level repairs before lines are built: margin line numbers, kerned spaces, line-end hyphens.

Everything here reads only the words' boxes and texts that PyMuPDF's ``words`` extraction gives,
so it costs no second pass over the page.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from itertools import pairwise
from typing import Any

from engine.text.scripts import RIGHT_TO_LEFT, word_script

Word = tuple[Any, ...]  # (x0, y0, x1, y1, text, ...) as in engine.ingest.layout

# A line-number column: at least this many bare integers stacked at one x position on a page.
_MIN_LINE_NUMBERS = 5
_INTEGER = re.compile(r"^\d{1,4}$")
# Words in one line closer than this fraction of the line's height were set as one word: the
# gap between real words is a space, 0.15-0.45 of the type height on every page measured.
KERN_GAP = 0.03


def line_number_words(raw_words: list[Word], page_width: float) -> set[int]:
    """Indexes of words that are margin line numbers (preprints, manuscripts, generated drafts).

    A line-number column is a stack of bare integers at one x position (left or right aligned),
    increasing from top to bottom, outside the text they number: no other word on the same
    baseline lies beyond them towards the page edge.
    """
    integers = [index for index, word in enumerate(raw_words) if word[4].isdigit()]
    if len(integers) < _MIN_LINE_NUMBERS:
        return set()
    columns: dict[tuple[str, int], list[int]] = defaultdict(list)
    for index in integers:
        word = raw_words[index]
        if _INTEGER.match(word[4]):
            columns[("left", round(word[0] / 3))].append(index)
            columns[("right", round(word[2] / 3))].append(index)
    found: set[int] = set()
    for (side, _), members in columns.items():
        if len(members) < _MIN_LINE_NUMBERS:
            continue
        stacked = sorted(members, key=lambda i: raw_words[i][3])
        values = [int(raw_words[i][4]) for i in stacked]
        rising = sum(b > a for a, b in pairwise(values))
        if rising < 0.8 * (len(values) - 1):
            continue
        mid = sum((raw_words[i][0] + raw_words[i][2]) / 2 for i in stacked) / len(stacked)
        in_margin = mid < 0.2 * page_width if side == "left" else mid > 0.8 * page_width
        if in_margin and _outermost(raw_words, stacked, side):
            found.update(stacked)
    return found


def _outermost(raw_words: list[Word], stacked: list[int], side: str) -> bool:
    """True when most numbers have no other word beyond them on their baseline (towards the edge)."""
    numbers = set(stacked)
    outer = 0
    for index in stacked:
        x0, _, x1, y1 = raw_words[index][:4]
        beyond = any(j not in numbers and abs(w[3] - y1) < 2 and (w[2] <= x0 if side == "left" else w[0] >= x1)
                     for j, w in enumerate(raw_words))
        outer += not beyond
    return outer >= 0.8 * len(stacked)


def glue_kerned(words: list[Word], gaps: list[float] | None = None) -> list[Word]:
    """Rejoin words split at kerning adjustments ("comple x f ormed b y" -> "complex formed by").

    Some typesetters put an invisible space at every kerning adjustment; PyMuPDF then breaks words
    where the glyphs touch or overlap. A line with two or more such touching pairs is taken to be
    set that way, and every touching pair is joined. Elsewhere only glyphs that abut (the next box
    starts where the last one ends, no space between them: "Figure 5 F" for 5F, "cA 4" with its
    subscript) are joined; a single overlap (an italic letter leaning into the next word) is left.
    ``gaps`` are the distances between neighbouring words, when the caller has them already.
    Returns ``words`` itself when nothing is joined.
    """
    if len(words) < 2:
        return words
    if word_script(words[0][4]) in RIGHT_TO_LEFT and 2 * sum(b[0] < a[0] for a, b in pairwise(words)) > len(words) - 1:
        # Right to left (Arabic, Hebrew): the next word lies to the left, so the gaps run the other way.
        gaps = [a[0] - b[2] for a, b in pairwise(words)]
    elif gaps is None:
        gaps = [b[0] - a[2] for a, b in pairwise(words)]
    limit = KERN_GAP * max(words[0][3] - words[0][1], 0.1)
    tight = sum(map(limit.__gt__, gaps))
    if not tight:
        return words
    # A kerned line joins every touching pair; elsewhere the gap must not be negative.
    floor = float("-inf") if tight >= 2 and len(words) >= 3 else 0.0
    if floor == 0.0 and not any(0.0 <= gap < limit for gap in gaps):
        return words
    glued: list[Word] = [words[0]]
    for word, gap in zip(words[1:], gaps, strict=True):
        if floor <= gap < limit:
            last = glued[-1]
            glued[-1] = (min(last[0], word[0]), min(last[1], word[1]), max(last[2], word[2]),
                         max(last[3], word[3]), last[4] + word[4])
        else:
            glued.append(word)
    return glued


# Hyphens that end a line: ASCII, Unicode hyphen and non-breaking hyphen, and the soft hyphen
# that some producers draw at a line break (and that copy-paste would otherwise drop).
_LINE_END_HYPHENS = ("\u00ad", "\u2010", "\u2011")


def normalise_line_end_hyphen(text: str) -> str:
    """Spell any line-end hyphen variant as '-', so the chunker can rejoin the broken word."""
    if text.endswith(_LINE_END_HYPHENS):
        return text[:-1] + "-"
    return text


def join_lines(lines: Iterable[str]) -> str:
    """Lines read as one text: a word broken by a hyphen at a line's end ("poly-" "merase") joined back."""
    out = ""
    for line in lines:
        out = out[:-1] + line if out.endswith("-") and line[:1].islower() else f"{out} {line}".strip()
    return out


def line_words(spans: list[dict[str, Any]]) -> Iterator[tuple[int, str, list[int]]]:
    """The words of one line of PyMuPDF's ``dict`` extraction, numbered as its ``words`` extraction numbers
    them (a word ends at a space or any control character): (word number, text, each character's span index).
    What lets a second look at a page's spans (a font's characters, a raised mark) find the word it changes."""
    word_no = 0
    chars: list[str] = []
    owners: list[int] = []
    for index, span in enumerate(spans):
        for c in span.get("text", ""):
            if c <= " ":
                if chars:
                    yield word_no, "".join(chars), owners
                    word_no, chars, owners = word_no + 1, [], []
                continue
            chars.append(c)
            owners.append(index)
    if chars:
        yield word_no, "".join(chars), owners
