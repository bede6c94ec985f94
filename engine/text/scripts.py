"""Which writing system a character belongs to, and text whose characters mean nothing.

Keyword search needs the script of each word: a run of Chinese, Japanese or Thai holds no spaces
and must be cut into words, and a language's stemmer applies only to words written in its own
script (an English name inside a Russian passage is not a Russian word). The ranges are Unicode's
blocks for each script; anything else (Latin, digits, symbols) is "other".
"""

from __future__ import annotations

import unicodedata

# Scripts written right to left.
RIGHT_TO_LEFT = frozenset({"arabic", "hebrew"})
# Scripts written without spaces between words.
UNSPACED = frozenset({"han", "kana", "thai", "lao", "khmer", "myanmar"})

_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0370, 0x03FF, "greek"), (0x1F00, 0x1FFF, "greek"),
    (0x0400, 0x052F, "cyrillic"),
    (0x0530, 0x058F, "armenian"),
    (0x0590, 0x05FF, "hebrew"),
    (0x0600, 0x06FF, "arabic"), (0x0750, 0x077F, "arabic"), (0x08A0, 0x08FF, "arabic"),
    (0xFB50, 0xFDFF, "arabic"), (0xFE70, 0xFEFF, "arabic"),
    (0x0900, 0x097F, "devanagari"),
    (0x0B80, 0x0BFF, "tamil"),
    (0x0E00, 0x0E7F, "thai"), (0x0E80, 0x0EFF, "lao"), (0x1000, 0x109F, "myanmar"), (0x1780, 0x17FF, "khmer"),
    (0x1100, 0x11FF, "hangul"), (0xAC00, 0xD7AF, "hangul"), (0x3130, 0x318F, "hangul"),
    (0x3040, 0x30FF, "kana"), (0x31F0, 0x31FF, "kana"), (0xFF66, 0xFF9F, "kana"),
    (0x3400, 0x4DBF, "han"), (0x4E00, 0x9FFF, "han"), (0xF900, 0xFAFF, "han"), (0x20000, 0x3134F, "han"),
)
_PRIVATE_USE = ((0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD))

# The script each language with a stemmer or segmenter is written in (ISO 639-1 codes).
LANGUAGE_SCRIPT = {
    "ar": "arabic", "fa": "arabic", "el": "greek", "hi": "devanagari", "ne": "devanagari", "mr": "devanagari",
    "ru": "cyrillic", "uk": "cyrillic", "bg": "cyrillic", "sr": "cyrillic", "hy": "armenian", "ta": "tamil",
    "yi": "hebrew", "he": "hebrew", "zh": "han", "ja": "kana", "th": "thai", "ko": "hangul",
}


def script_of(char: str) -> str:
    """The script of one character: "latin", "han", "cyrillic", ... or "other" (digits, signs)."""
    code = ord(char)
    if code < 0x0250:
        return "latin" if char.isalpha() else "other"
    for low, high, name in _RANGES:
        if low <= code <= high:
            return name
    if 0x3000 <= code <= 0x303F or 0xFF00 <= code <= 0xFF65:
        return "cjk mark"  # 、。「」 and the full-width forms (，！？)
    return "latin" if 0x1E00 <= code <= 0x1EFF else "other"


def word_script(word: str) -> str:
    """The script of a word: that of its first letter ("other" for a number)."""
    for char in word:
        if char.isalpha():
            return script_of(char)
    return "other"


def runs_on_unspaced(before: str, after: str) -> bool:
    """Whether text ending in ``before`` runs straight on into ``after`` with no space: both sides are
    letters (or punctuation closing a clause) of a script written without spaces."""
    # Ingest folds the full-width marks to ASCII ("，" -> ","): look past them to the letter before.
    letters = before.rstrip(",.!?;:)")
    return bool(letters) and bool(after) and script_of(letters[-1]) in _UNSPACED_OR_MARK \
        and script_of(after[0]) in _UNSPACED_OR_MARK


_UNSPACED_OR_MARK = UNSPACED | {"cjk mark"}


def is_meaningless(char: str) -> bool:
    """A character no text means: private use (a font's own codes), U+FFFD, or a control code."""
    code = ord(char)
    if any(low <= code <= high for low, high in _PRIVATE_USE) or code == 0xFFFD:
        return True
    return unicodedata.category(char) == "Cc" and char not in "\n\t\r"


def meaningless_share(text: str) -> float:
    """The share of ``text``'s non-space characters that mean nothing (see :func:`is_meaningless`)."""
    visible = [char for char in text if not char.isspace()]
    if not visible:
        return 0.0
    return sum(map(is_meaningless, visible)) / len(visible)
