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

from engine.errors import QueryError

# What unicode61 treats as token characters: Unicode letters and digits (``_`` separates).
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# Longer queries are cut: 10,000 characters of text would otherwise become a 1,500-term OR
# that costs seconds per search and ranks no better than its first few dozen distinct words.
MAX_TERMS = 48
# A "word" longer than this is a hash, a URL fragment or garbage; FTS5 would never match it.
MAX_TERM_LENGTH = 64
# Questions arrive as sentences; anything longer than this is cut before tokenizing.
MAX_QUERY_CHARS = 20_000

STOP_WORDS = frozenset("""
a about above across after again against all almost also although always am among an and another any
are aren around as at be became because been before being below between both but by can cannot could
did didn do does doesn doing done don down during each either else etc even ever every few for from
further had has hasn have having he her here hers herself him himself his how however i if in into is
isn it its itself just least less let like made make makes many may me might more most much must my
myself neither no nor not now of off often on once one only or other others otherwise our ours
ourselves out over own per perhaps rather really same several shall she should since so some such than
that the their theirs them themselves then there therefore these they this those though through thus
to too toward towards under until up upon us use used uses using very via was wasn we well were
weren what whatever when where whether which while who whom whose why will with within without would
yet you your yours yourself yourselves
""".split())

# Words that frame a research question rather than name its subject.
QUESTION_WORDS = frozenset("""
approach approaches current describe discuss example examples explain give key list main method methods
recent show state studies study tell way ways work works
""".split())


def query_terms(text: str, max_terms: int = MAX_TERMS, drop_question_words: bool = True) -> list[str]:
    """The distinct searchable words of ``text``, lower-cased, in order of first appearance.

    Stop words are dropped unless nothing else is left (a query made only of stop words still
    searches for them). Raises :class:`QueryError` when the text holds no word at all.
    """
    if not isinstance(text, str):
        raise QueryError("The search query must be text.")
    words = [w.lower() for w in _WORD.findall(text[:MAX_QUERY_CHARS]) if len(w) <= MAX_TERM_LENGTH]
    if not words:
        raise QueryError("The search query is empty: type a few words to search for." if not text.strip() else
                         "The search query holds no searchable words (letters or digits); type a few words.")
    distinct = list(dict.fromkeys(words))
    dropped = STOP_WORDS | QUESTION_WORDS if drop_question_words else STOP_WORDS
    content = [w for w in distinct if w not in dropped]
    if not content:
        content = [w for w in distinct if w not in STOP_WORDS] or distinct
    return content[:max_terms]


def quote(term: str) -> str:
    """One FTS5 string token: double quotes inside are doubled, so nothing in it is syntax."""
    return '"' + term.replace('"', '""') + '"'


def build_fts_query(text: str, max_terms: int = MAX_TERMS, mode: str = "or") -> str:
    """A safe FTS5 MATCH expression for ``text``: its content words, quoted, joined by OR (or AND)."""
    if mode not in ("or", "and"):
        raise ValueError(f"mode must be 'or' or 'and', not {mode!r}")
    joiner = " OR " if mode == "or" else " AND "
    return joiner.join(quote(term) for term in query_terms(text, max_terms))


def check_query(text: str) -> str:
    """The query stripped, or :class:`QueryError` if there is nothing to search for."""
    query_terms(text)
    return text.strip()


# BM25 column weights for (title, text). Each passage's FTS row holds its paper's title, so a
# query naming the paper's subject finds all of its passages; weighting the title above the
# text was measured on the scholarly dev set (benchmarks/retrieval_quality.py).
TITLE_WEIGHT = 1.0
TEXT_WEIGHT = 1.0


def bm25_expression(table: str, title_weight: float = TITLE_WEIGHT, text_weight: float = TEXT_WEIGHT) -> str:
    """The SQL ``bm25(...)`` call for an FTS5 table with (title, text) columns (lower is better).

    Every source (library and datastores) should rank with this, so their BM25 scores stay comparable.
    """
    if not table.replace("_", "").isalnum():
        raise ValueError(f"not a table name: {table!r}")
    return f"bm25({table}, {float(title_weight)!r}, {float(text_weight)!r})"
