"""Characters that some typesetters' fonts name wrongly, put right before lines are built.

A PDF says which character each glyph is through its font's Unicode map. Some fonts lie: the
Advent 3B2 fonts that many Elsevier, Cell Press and RSC papers are set in draw "=" with a code
that their map calls "¼", "±" with one it calls "5", and the "fi" and "fl" ligatures with
private-use codes, so "fluorescent" reaches a search index as "\ue104uorescent" and
"mean ± SEM" as "mean 5 SEM". Older papers set Greek letters in the Symbol font, whose codes
arrive in the private-use block (U+F061 for alpha).

The tables say, for a font, which of its characters are really which. They are keyed by the
font's base name (without the subset prefix), so an ordinary "5" or "½" in any other font is left
alone. Each entry was read off the rendered pages of papers that use the font (an "=" between a
symbol and a value, a "±" between a mean and its error, "°C" after a temperature), and the same
fonts are described so in other PDF tools' repair tables. Codes below 32 are not mapped: a subset
font numbers such glyphs in order of use, so the same code is "°" in one paper and "∼" in the next
(and PyMuPDF ends a word at them, as at a space).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.ingest.as_printed import micro_fixes, symbol_style
from engine.ingest.words import line_words

# The Symbol font's codes 0x20-0x7E moved to U+F020-U+F07E (how Windows maps a symbol font):
# Latin letters stand for Greek ones, a few punctuation codes for mathematical signs.
_SYMBOL_FONT = "Symbol"
_SYMBOL_LETTERS = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                           "ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖαβχδεφγηιϕκλμνοπθρστυϖωξψζ", strict=True))
_SYMBOL_SIGNS = {'"': "∀", "$": "∃", "'": "∋", "*": "∗", "-": "−", "@": "≅", "^": "⊥"}
_SYMBOL_PRIVATE = {chr(0xF000 + code): _SYMBOL_SIGNS.get(chr(code), _SYMBOL_LETTERS.get(chr(code), chr(code)))
                   for code in range(0x20, 0x7F)}

# Fonts whose whole name is known: Advent 3B2's symbol fonts, and its Greek fonts, which put
# Greek letters at the Latin letters' codes as the Symbol font does ("c1" for chi-1).
_BY_FONT: dict[str, dict[str, str]] = {
    "AdvP4C4E74": {"¼": "=", "þ": "+", "ð": "(", "Þ": ")", "½": "["},
    "AdvPS586D": {"5": "±"},
    # Greek at the letters' codes too: "b-barrel", "a helices", "l = 0.931 Å" are β, α, λ.
    "AdvPS7DA6": {**_SYMBOL_LETTERS, "$": "≥", "#": "≤"},
    "AdvP7DA6": _SYMBOL_LETTERS,  # "0.4-mm" filters, "b-lactam": 0.4-μm, β-lactam
    "AdvTTcd7bcd39": _SYMBOL_LETTERS,  # Science's Greek font: "DDGs", "10-mm beads" are ΔΔGs, 10-μm
    "AdvPS44A44B": {"$": "·"},
    "AdvPS3FDD77": {".": "…"},
    "AdvPS3F4C13": _SYMBOL_LETTERS,
    "AdvPS4721B4": _SYMBOL_LETTERS,
    "AdvPS3D56D5": _SYMBOL_LETTERS,
}

# Advent's OpenType text fonts ("AdvOT" + a hash) draw ligatures from the private-use area.
_ADVENT_OPENTYPE = "AdvOT"
_ADVENT_LIGATURES = {"\ue09d": "ft", "\ue103": "fi", "\ue104": "fl", "\ue0d5": "—"}


def base_font_name(name: str) -> str:
    """A font's name without the six-letter subset prefix ("ABCDEF+AdvP4C4E74" -> "AdvP4C4E74")."""
    prefix, plus, rest = name.partition("+")
    return rest if plus and len(prefix) == 6 and prefix.isalpha() and prefix.isupper() else name


def font_fixes(font: str) -> Mapping[str, str]:
    """The characters of ``font`` (a base name) that stand for other characters; empty if none."""
    if font in _BY_FONT:
        return _BY_FONT[font]
    if font.startswith(_ADVENT_OPENTYPE):
        return _ADVENT_LIGATURES
    if font == _SYMBOL_FONT or font.startswith(_SYMBOL_FONT + ","):
        return _SYMBOL_PRIVATE
    return {}


def page_needs_repair(page: Any) -> bool:
    """True when the page uses a font with known wrong names, or one that may set a micro sign at the
    code of "m" (engine/ingest/as_printed.py): a cheap look at its font list."""
    names = [base_font_name(font[3]) for font in page.get_fonts()]
    return any(font_fixes(name) or symbol_style(name) for name in names)


def repair_words(page: Any, textpage: Any, words: list[Any], page_dict: dict[str, Any] | None = None) -> list[Any]:
    """``words`` (PyMuPDF word tuples) with the characters of lying fonts put right.

    Only pages that use such a font pay for a second look at their text, span by span with each
    span's font (``dict``, a fifth of the cost of ``rawdict``'s character boxes, which are not
    needed). A word is rebuilt only where its characters' text is exactly the word's text, so a
    word PyMuPDF split or joined differently is left as it was. ``page_dict`` is the page's
    ``dict`` when the caller has read it already (the first page, for its metadata).
    """
    if not words or not page_needs_repair(page):
        return words
    repaired = _repaired_texts(page_dict if page_dict is not None else page.get_text("dict", textpage=textpage))
    if not repaired:
        return words
    out = []
    for word in words:
        found = repaired.get((word[5], word[6], word[7]))
        if found is not None and found[0] == word[4]:
            word = (*word[:4], found[1], *word[5:])
        out.append(word)
    return out


def _repaired_texts(page_dict: dict[str, Any]) -> dict[tuple[int, int, int], tuple[str, str]]:
    """(block, line, word) -> (text as read, text repaired), for the words that change."""
    found: dict[tuple[int, int, int], tuple[str, str]] = {}
    for block_no, block in enumerate(page_dict.get("blocks", [])):
        for line_no, line in enumerate(block.get("lines", [])):
            spans = line.get("spans", [])
            fonts = [base_font_name(span.get("font", "")) for span in spans]
            fixes = micro_fixes(spans, fonts, [font_fixes(font) for font in fonts])
            if not any(fixes):
                continue
            for word_no, text, owners in line_words(spans):
                fixed = "".join(fixes[owner].get(c, c) for c, owner in zip(text, owners, strict=True))
                if fixed != text:
                    found[(block_no, line_no, word_no)] = (text, fixed)
    return found
