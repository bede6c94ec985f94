"""Text as the page prints it, where the text layer says otherwise: a micro sign read as "m",
a drop cap set apart from its word.

Two repairs on a page's words, each made only where the page itself shows what is printed:

- **μ read as m.** Papers set Greek letters in a Symbol-like font that puts them at the Latin
  letters' codes, so "10 μm" reaches the text layer as "10 mm" (or "10-mm"). Fonts known to be
  such fonts are in engine/ingest/glyphs.py's table. For another font only one case is sure: a
  lone "m" in a symbol-style font (its name says Symbol, Pi or Greek, or an Advent symbol font),
  set apart from the text around it, after a number and before a unit ("5 μm", "20 μg/ml", "15 μM").
  A variable "m" in a formula is set in a math italic font and never matches.
- **Drop caps.** A paper's first letter set large beside its first lines ("A" beside "lthough
  most ..."): PyMuPDF reads it as a word of its own, on no line of the paragraph, and the layout
  then loses it or reads it elsewhere. A single capital letter far taller than the page's type,
  with the first word of a line just right of its top, is joined to that word ("Although"). When
  the capital is a word by itself ("A" beside "recent") it is put in front as a word of its own.
Each repaired word keeps a box: a joined drop cap widens its word's box to the capital's left edge
(at the line's height, so the line stays as tall as its type).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from engine.ingest.wordlist import COMMON_COUNT, english_counts

Word = tuple[Any, ...]  # (x0, y0, x1, y1, text, block_no, line_no, word_no) as PyMuPDF gives words

# --- μ read as m ------------------------------------------------------------------------

MICRO = {"m": "μ"}
# Fonts whose codes may stand for Greek letters: the Symbol font and its clones (Mathematical Pi,
# Universal Greek), and Advent 3B2's symbol fonts, named by a hash ("AdvPS7DA6", "AdvTTcd7bcd39").
# Advent's text fonts carry the same prefix, so the span's context decides, never the name alone.
_SYMBOL_STYLE = re.compile(r"symbol|mathpi|mathematicalpi|greek|^adv(?:p|ps|tt)[0-9a-f]{4,8}$", re.I)
_UNIT_AFTER = re.compile(r"^(?:mol|Pa|Ci|[mMgLlsAVWFJN])(?![a-z])")
_NUMBER_BEFORE = re.compile(r"\d[\s\u00a0\-\u2010\u2013]*$")


def symbol_style(font: str) -> bool:
    """True when ``font`` (a base name) may be a Symbol-like font (see :func:`micro_spans`)."""
    return bool(_SYMBOL_STYLE.search(font))


def micro_spans(spans: list[dict[str, Any]], fonts: list[str]) -> set[int]:
    """Indexes of the spans of one line whose "m" is a micro sign: a lone "m" in a symbol-style font
    (``fonts`` are the spans' base names) other than its neighbours', after a number, before a unit."""
    found: set[int] = set()
    for index, span in enumerate(spans):
        if span.get("text", "").strip() != "m" or not symbol_style(fonts[index]):
            continue
        if index == 0 or index + 1 >= len(spans) or fonts[index - 1] == fonts[index] == fonts[index + 1]:
            continue
        before = spans[index - 1].get("text", "") + span["text"].partition("m")[0]
        after = spans[index + 1].get("text", "")
        if span["text"].endswith("m") and _NUMBER_BEFORE.search(before) and _UNIT_AFTER.match(after):
            found.add(index)
    return found


def micro_fixes(spans: list[dict[str, Any]], fonts: list[str],
                fixes: list[Mapping[str, str]]) -> list[Mapping[str, str]]:
    """``fixes`` (each span's character map) with the micro signs of :func:`micro_spans` added."""
    micro = micro_spans(spans, fonts)
    if not micro:
        return fixes
    return [{**fix, **MICRO} if index in micro else fix for index, fix in enumerate(fixes)]


# --- drop caps ----------------------------------------------------------------------------

# A drop cap spans two lines or more: at least this many times the page's usual word height.
DROP_CAP_HEIGHT = 2.5


def attach_drop_caps(words: list[Word]) -> list[Word]:
    """``words`` with each drop cap joined to the word it begins (see the module's docstring)."""
    caps = [index for index, word in enumerate(words) if len(word[4]) == 1 and word[4].isupper()]
    if not caps:
        return words
    heights = sorted(word[3] - word[1] for word in words)
    typical = heights[len(heights) // 2]
    caps = [index for index in caps if words[index][3] - words[index][1] >= DROP_CAP_HEIGHT * typical > 0]
    if not caps:
        return words
    joined: dict[int, list[Word]] = {}  # the word a cap begins -> what replaces it
    dropped: set[int] = set()
    for cap_index in caps:
        target = _capped_word(words, cap_index, typical)
        if target is None or target in joined:
            continue
        cap, word = words[cap_index], words[target]
        if _is_word_alone(cap[4], word[4]):
            # A word of its own at the head of the line: the cap's width, the line's height.
            joined[target] = [(cap[0], word[1], cap[2], word[3], cap[4], *word[5:]), word]
        else:
            joined[target] = [(cap[0], word[1], word[2], word[3], cap[4] + word[4], *word[5:])]
        dropped.add(cap_index)
    if not joined:
        return words
    out: list[Word] = []
    for index, word in enumerate(words):
        if index not in dropped:
            out.extend(joined.get(index, (word,)))
    return out


def _capped_word(words: list[Word], cap_index: int, typical: float) -> int | None:
    """The word a drop cap begins: the first word of the topmost line beside the cap's top, starting just
    right of it with a small letter (or a capital set in small capitals: "T" + "HE"), its paragraph's next
    line starting below it at the same edge, still beside the cap; None if there is none.

    The cap is a line of its own and the lines beside it are lines of text (four words or more): a big
    operator of a formula ("Σ" drawn as "P" beside its subscripts) or a glyph with a broken box is neither.
    """
    cap = words[cap_index]
    _, cy0, cx1, cy1 = cap[:4]
    per_line = Counter(word[5:7] for word in words)
    if per_line[cap[5:7]] != 1:
        return None
    starts = [index for index, word in enumerate(words)
              if index != cap_index and cx1 - 0.5 * typical <= word[0] <= cx1 + 1.5 * typical
              and not (index and words[index - 1][5:7] == word[5:7] and words[index - 1][2] <= word[0])]
    best: int | None = None
    for index in starts:
        x0, y0, _, y1, text = words[index][:5]
        if not cy0 <= (y0 + y1) / 2 <= cy0 + 0.5 * (cy1 - cy0) or not text[:1].isalpha():
            continue
        if not (text[0].islower() or (text.isupper() and len(text) > 1)) or per_line[words[index][5:7]] < 4:
            continue
        if best is None or y0 < words[best][1]:
            best = index
    if best is None:
        return None
    x0, _, _, y1 = words[best][:4]
    below = any(abs(words[index][0] - x0) <= 1.5 and y1 - 1 <= words[index][1] and words[index][3] <= cy1 + typical
                for index in starts)
    return best if below else None


def _is_word_alone(letter: str, rest: str) -> bool:
    """True when a drop cap is a word by itself ("A" beside "recent"): "A" or "I" before a word that is
    common English alone while the two together are not."""
    if letter not in "AI":
        return False
    counts = english_counts()
    head = re.sub(r"[^\w]+$", "", rest).lower()
    return counts.get(head, 0) > COMMON_COUNT and (letter + head).lower() not in counts
