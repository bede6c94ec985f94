"""Turning whatever a user typed into a safe SQLite FTS5 MATCH expression.

User text is never interpreted as FTS5 syntax: it is cut into the same word tokens FTS5's
``unicode61`` tokenizer makes (letters and digits; everything else, quotes, ``*``, ``-``,
``:``, parentheses, separates words) and each word is emitted as a double-quoted string, so
``NEAR``, ``AND``, ``OR``, ``NOT``, column filters and prefix stars in the input are just words.

The words are joined with ``OR``, not FTS5's implicit ``AND``: a literature question holds many
words no single passage contains all of, and BM25 already ranks passages that hold more (and
rarer) query words first. Common English words and question scaffolding ("what", "recent",
"approaches") are dropped, since under ``OR`` they would match nearly every passage and only
slow the query down without changing the ranking much.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence

from engine.errors import QueryError
from engine.store.vocabulary import TOKENIZER, FtsVocabulary
from engine.text.characters import readable_text
from engine.text.keywords import keyword_form, split_words
from engine.text.language import question_language
from engine.text.stopwords import QUESTION_WORDS, STOP_WORDS
from engine.tuning import RETRIEVAL

# What unicode61 treats as token characters: Unicode letters and digits (``_`` separates).

# Longer queries are cut: 10,000 characters of text would otherwise become a 1,500-term OR
# that costs seconds per search and ranks no better than its first few dozen distinct words.
MAX_TERMS = 48
# FTS5 indexes a word of any length (its Porter stemmer leaves words over 64 characters as they are),
# and researchers search for long ones: a 70-base DNA sequence, a SHA-512 hash, an 80-digit number.
# Only a "word" longer than this (a pasted blob) is left out of the query.
MAX_TERM_LENGTH = 1000
# Questions arrive as sentences; anything longer than this is cut before tokenizing.
MAX_QUERY_CHARS = 20_000

def query_terms(text: str, max_terms: int = MAX_TERMS, drop_question_words: bool = True,
                keyword_forms: bool = True) -> list[str]:
    """The distinct searchable words of ``text``, lower-cased, in order of first appearance; with
    ``keyword_forms``, as the index holds words of the question's language (:func:`in_keyword_forms`).

    Stop words are dropped unless nothing else is left (a query made only of stop words still
    searches for them). Raises :class:`QueryError` when the text holds no word at all.
    """
    if not isinstance(text, str):
        raise QueryError("The search query must be text.")
    text = text[:MAX_QUERY_CHARS]
    words = [w.lower() for w in split_words(text) if len(w) <= MAX_TERM_LENGTH]
    if not words:
        raise QueryError("The search query is empty: type a few words to search for." if not text.strip() else
                         "The search query holds no searchable words (letters or digits); type a few words.")
    distinct = list(dict.fromkeys(words))
    dropped = STOP_WORDS | QUESTION_WORDS if drop_question_words else STOP_WORDS
    content = [w for w in distinct if w not in dropped]
    if not content:
        content = [w for w in distinct if w not in STOP_WORDS] or distinct
    if keyword_forms:
        content = in_keyword_forms(content, question_language(text))
    return content[:max_terms]


def in_keyword_forms(words: Sequence[str], language: str) -> list[str]:
    """``words`` as the index holds words of ``language`` (engine/text/keywords.py), in order.

    A word the language's stemmer changes is searched as its stem and as typed: the stem finds the
    passages in that language, the word as typed finds it in English passages (a name, a term of
    art, or an English question the detector took for another language). English words are
    unchanged: FTS5 stems them.
    """
    forms: list[str] = []
    for word in words:
        form = keyword_form(word, language)
        forms.extend((form, word) if form != word else (word,))
    return list(dict.fromkeys(forms))


def quote(term: str) -> str:
    """One FTS5 string token: double quotes inside are doubled, so nothing in it is syntax."""
    return '"' + term.replace('"', '""') + '"'


def any_of(terms: Iterable[str]) -> str:
    """An FTS5 expression that matches any of ``terms`` (each quoted, joined by OR)."""
    return " OR ".join(quote(term) for term in terms)


def build_fts_query(text: str, max_terms: int = MAX_TERMS, mode: str = "or") -> str:
    """A safe FTS5 MATCH expression for ``text``: its content words, quoted, joined by OR (or AND)."""
    if mode not in ("or", "and"):
        raise ValueError(f"mode must be 'or' or 'and', not {mode!r}")
    if mode == "or":
        return any_of(query_terms(text, max_terms))
    # Every word must be there, as the index holds it in the question's language or as typed.
    language = question_language(text[:MAX_QUERY_CHARS])
    groups = [in_keyword_forms([word], language) for word in query_terms(text, max_terms, keyword_forms=False)]
    return " AND ".join(quote(forms[0]) if len(forms) == 1 else f"({any_of(forms)})" for forms in groups)


def check_query(text: str) -> str:
    """The query stripped, undecodable characters replaced; :class:`QueryError` if there is nothing to search for."""
    query_terms(text)
    return readable_text(text).strip()


# BM25 column weights for (title, text), measured: engine/tuning.py.
TITLE_WEIGHT = RETRIEVAL.title_weight
TEXT_WEIGHT = RETRIEVAL.text_weight


def bm25_expression(table: str, title_weight: float = TITLE_WEIGHT, text_weight: float = TEXT_WEIGHT) -> str:
    """The SQL ``bm25(...)`` call for an FTS5 table with (title, text) columns (lower is better).

    Every source (library and datastores) should rank with this, so their BM25 scores stay comparable.
    """
    if not table.replace("_", "").isalnum():
        raise ValueError(f"not a table name: {table!r}")
    return f"bm25({table}, {float(title_weight)!r}, {float(text_weight)!r})"


# --- common words --------------------------------------------------------------------------

# A query word found in more than this share of a source's passages is left out of its BM25 query:
# FTS5 scores every row that matches any OR'd word, and such a word's low IDF barely moves the
# ranking (measured: engine/tuning.py).
COMMON_TERM_SHARE = RETRIEVAL.common_term_share
# Document frequencies are cached this long; ingest changes them slowly and pruning is a heuristic.
_TERM_CACHE_SECONDS = 60.0
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')


def quoted_words(fts_query: str) -> list[str]:
    """The words of an OR query :func:`build_fts_query` made, unquoted, in order."""
    return [match.replace('""', '"') for match in _QUOTED.findall(fts_query)]


def uncommon_words(words: Sequence[str], stems: Sequence[str], frequency: Callable[[str], int], rows: int,
                   share: float = COMMON_TERM_SHARE) -> list[str]:
    """``words`` without those whose stem more than ``share`` of ``rows`` passages hold.

    All of them when the table is small (cheap to score whole), when fewer than two words are
    given, or when every word is common (a query of common words still searches for them).
    """
    if share <= 0 or rows < 1000 or len(words) < 2:
        return list(words)
    kept = [w for w, stem in zip(words, stems, strict=True) if frequency(stem) <= share * rows]
    return kept or list(words)


class FtsStemmer:
    """Words as a ``passages_fts`` table indexes them (lower-cased, diacritics folded, Porter-stemmed).

    It asks FTS5 itself, through a tiny in-memory table with the same tokenizer, so a stem always
    matches the table's vocabulary exactly.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute(f"CREATE VIRTUAL TABLE words USING fts5(text, tokenize = '{TOKENIZER}')")
        self._conn.execute("CREATE VIRTUAL TABLE words_vocab USING fts5vocab(words, 'instance')")

    def stems(self, words: Sequence[str]) -> list[str] | None:
        """One stem per word, in order; None when some word is not exactly one token."""
        with self._lock:
            self._conn.execute("DELETE FROM words")
            self._conn.execute("INSERT INTO words(text) VALUES (?)", (" ".join(words),))
            tokens = [row[0] for row in self._conn.execute("SELECT term FROM words_vocab ORDER BY offset")]
        return tokens if len(tokens) == len(words) else None


class CommonTerms:
    """Drops the words most passages of one FTS5 table contain from that table's BM25 queries.

    The document frequency of each word comes from the table's own vocabulary, the word stemmed
    by :class:`FtsStemmer`.
    """

    def __init__(self, vocabulary: FtsVocabulary, share: float = COMMON_TERM_SHARE) -> None:
        self._vocabulary = vocabulary
        self._share = share
        self._lock = threading.Lock()
        self._stemmer = FtsStemmer()
        self._frequencies: dict[str, int] = {}
        self._rows = 0
        self._fresh_until = 0.0

    def prune(self, fts_query: str) -> str:
        """``fts_query`` (quoted words joined by OR) without its common words; unchanged when all are."""
        if self._share <= 0 or " AND " in fts_query:
            return fts_query
        words = quoted_words(fts_query)
        if len(words) < 2:
            return fts_query
        with self._lock:
            self._refresh()
            if self._rows < 1000:  # a small table is cheap to score whole
                return fts_query
            stems = self._stemmer.stems(words) or list(words)
            kept = uncommon_words(words, stems, self._frequency, self._rows, self._share)
        return any_of(kept)

    def _refresh(self) -> None:
        now = time.monotonic()
        if now < self._fresh_until:
            return
        self._rows = self._vocabulary.rows()
        self._frequencies.clear()
        self._fresh_until = now + _TERM_CACHE_SECONDS

    def _frequency(self, stem: str) -> int:
        if stem not in self._frequencies:
            self._frequencies[stem] = self._vocabulary.frequency(stem)
        return self._frequencies[stem]
