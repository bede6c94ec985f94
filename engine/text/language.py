"""The language a passage or a question is written in, by lingua (n-gram models, offline).

Each passage is stored with its language so keyword search can cut and stem its words as that
language's own (engine/text/keywords.py); a question is detected the same way. The detector runs in
lingua's low-accuracy mode: its models for every language take ~120 MB, where the high-accuracy
ones take ~1 GB and 14 s to load (benchmarks/language_detection.py; ``--high`` measures what they
add). Languages are ISO 639-1 codes ("de", "zh"); ``UNKNOWN`` ("") when lingua cannot tell, and
``NO_LANGUAGE`` ("zxx", ISO 639-2's "no linguistic content") for a text layer whose characters mean
nothing (a font's private-use codes): such text is flagged and not indexed as words.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import TYPE_CHECKING

from engine.text.scripts import meaningless_share
from engine.text.stopwords import STOP_WORDS
from engine.text.tokens import LETTERS

if TYPE_CHECKING:
    from lingua import LanguageDetector

UNKNOWN = ""
NO_LANGUAGE = "zxx"
ENGLISH = "en"
# Enough text to tell a language by, and a bound on the cost of a long passage: on XQuAD's paragraphs
# (~700 characters) the sample is right for 99.6-100 % of them, the whole paragraph for 99.6-100 %
# (benchmarks/language_detection.py).
SAMPLE_CHARS = 600
# Past this share of characters that mean nothing, a text layer is taken for a font's own codes.
MEANINGLESS_SHARE = 0.3

_lock = threading.Lock()
_detector: LanguageDetector | None = None


def _lingua() -> LanguageDetector:
    global _detector
    with _lock:
        if _detector is None:
            from lingua import LanguageDetectorBuilder

            _detector = LanguageDetectorBuilder.from_all_languages().with_low_accuracy_mode().build()
        return _detector


def detect_language(text: str) -> str:
    """The ISO 639-1 code of ``text``'s language, ``UNKNOWN`` when it cannot be told, or
    ``NO_LANGUAGE`` when most of its characters mean nothing."""
    sample = text[:SAMPLE_CHARS]
    if not sample.strip():
        return UNKNOWN
    if meaningless_share(sample) > MEANINGLESS_SHARE:
        return NO_LANGUAGE
    if not any(char.isalpha() for char in sample):
        return UNKNOWN
    share, latin, words = _english_share(sample)
    if latin >= MIN_SHORTCUT_WORDS and 2 * latin >= words and share >= ENGLISH_WORD_SHARE:
        return ENGLISH  # most passages: a set lookup per word instead of lingua's n-grams
    # lingua takes UTF-8: a lone surrogate (bytes that were not UTF-8, kept by Python) is left out of the sample.
    found = _lingua().detect_language_of(sample.encode("utf-8", "ignore").decode("utf-8"))
    return UNKNOWN if found is None else found.iso_code_639_1.name.lower()


# English function words that are not also common words of other languages written in Latin letters
# ("a", "in", "also", "was", "will" are German, Spanish or Italian words too).
_SHARED_WORDS = frozenset({"a", "am", "an", "as", "die", "do", "hat", "her", "i", "in", "is", "la", "de", "made",
                           "me", "must", "no", "on", "once", "or", "over", "per", "so", "us", "also", "was", "will"})
_ENGLISH_WORDS = STOP_WORDS - _SHARED_WORDS
# A text whose Latin words hold at least this share of English function words is English: XQuAD's
# English paragraphs hold 0.33 (median; 95 % above 0.23), its German and Spanish ones at most 0.10.
ENGLISH_WORD_SHARE = 0.2
# A passage of this many Latin words or more that clears the share is English without asking lingua.
MIN_SHORTCUT_WORDS = 10
# A question in Latin letters needs this many words for its language to be told (scripts of their own,
# such as Chinese or Arabic, tell it in one).
MIN_QUESTION_WORDS = 4


@lru_cache(maxsize=1024)
def question_language(question: str) -> str:
    """The language of a question, remembered (one search reads its question several times).

    A question is short and full of terms of art, and lingua's low-accuracy mode takes one English
    question in twelve for another language ("How do optomechanical resonators relate?" for Polish).
    English function words settle it: with them 99.2 % of XQuAD's English questions are told English
    (91.8 % by lingua alone), for 0.6 % of German and 0.9 % of Chinese questions (with English names in
    them) taken for English (benchmarks/language_detection.py).
    """
    found = detect_language(question)
    if found in (ENGLISH, UNKNOWN, NO_LANGUAGE):
        return found
    share, latin, words = _english_share(question)
    if latin and 2 * latin >= words:
        if words < MIN_QUESTION_WORDS:
            return UNKNOWN  # "graphene models": too few words to tell, so searched as typed
        if share >= ENGLISH_WORD_SHARE:
            return ENGLISH
    return found


def _english_share(text: str) -> tuple[float, int, int]:
    """The share of ``text``'s Latin-letter words that are English function words, how many Latin
    words it has, and how many words in all."""
    words = [word.lower() for word in LETTERS.findall(text)]
    latin = [word for word in words if word.isascii()]
    share = sum(word in _ENGLISH_WORDS for word in latin) / len(latin) if latin else 0.0
    return share, len(latin), len(words)


def language_name(code: str) -> str:
    """The English name of a language code ("de" -> "German"); the code itself when unknown."""
    if not code or code == NO_LANGUAGE:
        return ""
    from lingua import IsoCode639_1, Language

    try:
        iso = IsoCode639_1.from_str(code)
    except ValueError:
        return code
    found = Language.from_iso_code_639_1(iso)
    return found.name.capitalize()
