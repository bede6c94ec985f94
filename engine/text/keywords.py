"""Words as keyword search indexes them, per language: cut where a script has no spaces, stemmed by
the language's own Snowball stemmer.

The FTS5 index (``porter unicode61``) splits words at spaces and punctuation and stems them with
English Porter. That is right for English and wrong elsewhere: a Chinese, Japanese or Thai clause
has no spaces, so it reached the index as one "word" no question could match, and a German or
Russian word was stemmed as if it were English (not at all). So the text handed to FTS5 is made
here first:

- English, and text whose language is unknown, is handed over unchanged: FTS5 treats it exactly as
  before (its index and its results are identical).
- A run of Chinese, Japanese, Thai, Lao, Khmer or Burmese letters is cut into words by ICU's word
  break rules (a dictionary per script; PyICU). Without PyICU each such letter is a word of its own,
  which still finds a passage, less precisely.
- Every other word is lower-cased and, when the language has a Snowball stemmer and the word is
  written in that language's script, stemmed by it ("Untersuchungen" -> "untersuch"); a Latin word
  inside a Russian passage (a name, a gene) is left to FTS5's Porter as an English word would be.
- Text that means nothing (``NO_LANGUAGE``: a font's private-use codes) is not indexed as words.

A question goes through the same function with its own detected language, so its words meet the
passages' words in the same form. FTS5's Porter then runs over both, the same on both sides.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

import snowballstemmer

from engine.text.language import ENGLISH, NO_LANGUAGE, UNKNOWN, detect_language
from engine.text.scripts import LANGUAGE_SCRIPT, UNSPACED, script_of, word_script
from engine.text.tokens import WORD

# ISO 639-1 code -> Snowball algorithm. English is absent on purpose: FTS5's own Porter stems it.
_SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish",
    "nl": "dutch", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french", "de": "german",
    "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian",
    "lt": "lithuanian", "ne": "nepali", "nb": "norwegian", "nn": "norwegian", "fa": "persian", "pl": "polish",
    "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian", "st": "sesotho", "es": "spanish",
    "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}
UNSPACED_TEXT = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
                             r"\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]")


@lru_cache(maxsize=64)
def _stemmer(language: str) -> Callable[[str], str] | None:
    algorithm = _SNOWBALL.get(language)
    if algorithm is None or algorithm not in snowballstemmer.algorithms():
        return None
    stemmer = snowballstemmer.stemmer(algorithm)
    lock = threading.Lock()  # a Snowball stemmer object keeps state between calls

    def stem(word: str) -> str:
        with lock:
            return str(stemmer.stemWord(word))
    return stem


def has_stemmer(language: str) -> bool:
    """Whether words of ``language`` are stemmed here (English is stemmed by FTS5 itself)."""
    return _stemmer(language) is not None


class _WordBreaker:
    """ICU's word break iterator, one per thread (an iterator holds the text it walks)."""

    def __init__(self) -> None:
        self._local = threading.local()
        try:
            import icu
        except ImportError:
            self._icu: Any = None
        else:
            self._icu = icu

    @property
    def available(self) -> bool:
        return self._icu is not None

    def words(self, run: str) -> list[str]:
        """The words of ``run`` (letters of one or more scripts, no spaces), as ICU cuts them."""
        if self._icu is None:
            return _letters_apart(run)
        breaker = getattr(self._local, "breaker", None)
        if breaker is None:
            breaker = self._icu.BreakIterator.createWordInstance(self._icu.Locale.getRoot())
            self._local.breaker = breaker
        breaker.setText(run)
        ends = list(breaker)
        pieces = [run[start:end] for start, end in zip([0, *ends[:-1]], ends, strict=True)]
        return [piece for piece in pieces if WORD.fullmatch(piece)]


def _letters_apart(run: str) -> list[str]:
    """Without ICU: each letter of an unspaced script a word, other letters kept together."""
    words: list[str] = []
    for char in run:
        if script_of(char) in UNSPACED or not words or script_of(words[-1][-1]) in UNSPACED:
            words.append(char)
        else:
            words[-1] += char
    return words


_BREAKER = _WordBreaker()


def segmenter_name() -> str:
    """Which segmenter cuts unspaced scripts here: "icu" or "letters" (PyICU not installed)."""
    return "icu" if _BREAKER.available else "letters"


def split_words(text: str) -> Iterator[str]:
    """The words of ``text`` in order, unspaced scripts cut into words, case kept."""
    for match in WORD.finditer(text):
        word = match.group()
        if UNSPACED_TEXT.search(word):
            yield from _BREAKER.words(word)
        else:
            yield word


def keyword_form(word: str, language: str) -> str:
    """``word`` lower-cased and, when it is written in ``language``'s script, stemmed by its stemmer."""
    lower = word.lower()
    stem = _stemmer(language)
    if stem is None or word_script(lower) != LANGUAGE_SCRIPT.get(language, "latin"):
        return lower
    return stem(lower)


def keyword_words(text: str, language: str) -> list[str]:
    """The words of ``text`` as the index holds them for a text in ``language``, in order."""
    if language == NO_LANGUAGE:
        return []
    return [keyword_form(word, language) for word in split_words(text)]


def keyword_text(text: str, language: str) -> str:
    """What FTS5 is given to index for ``text`` written in ``language`` (see the module's notes)."""
    if language == NO_LANGUAGE:
        return ""
    if (language in (ENGLISH, UNKNOWN) or not has_stemmer(language)) and not UNSPACED_TEXT.search(text):
        return text
    return " ".join(keyword_words(text, language))


# A script most of whose readers write one language: its words are stemmed by that language's stemmer
# where the words' own language is not known (a sentence compared with a question word by word).
_SCRIPT_LANGUAGE = {"arabic": "ar", "cyrillic": "ru", "greek": "el", "devanagari": "hi", "armenian": "hy",
                    "tamil": "ta"}


def script_words(text: str) -> set[str]:
    """The words of ``text`` written in a script other than Latin, lower-cased, unspaced scripts cut into
    words and the others stemmed by their script's main language: what a question's words and a sentence's
    are compared by when they are not in English. Single letters of an unspaced script are left out (in
    Chinese they are mostly particles: 的, 了)."""
    found = set()
    for word in split_words(text):
        script = word_script(word)
        if script in ("latin", "other"):
            continue
        if script in UNSPACED:
            if len(word) > 1:
                found.add(word.lower())
        elif len(word) > 2:
            found.add(keyword_form(word, _SCRIPT_LANGUAGE.get(script, UNKNOWN)))
    return found


@lru_cache(maxsize=4096)
def title_keywords(title: str) -> str:
    """What FTS5 indexes for a paper's title: its words as the title's own language has them (a
    paper's title and its text may be in two languages; every passage repeats the title, hence the cache)."""
    return keyword_text(title, detect_language(title)) if title else title
