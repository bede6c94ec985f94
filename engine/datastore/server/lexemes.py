"""Passages as PostgreSQL ``tsvector`` values holding exactly the tokens the local FTS5 index holds.

PostgreSQL's own parser and English stemmer (Snowball) split and stem differently from FTS5's
``unicode61`` + Porter, so the server's BM25 would rank differently from the local datastore's.
Instead each batch of passages goes through an in-memory FTS5 table with Quire's tokenizer, and its
``fts5vocab`` instances (stem, passage, column, offset) become the passage's tsvector: every stem
with its positions, title tokens first. The server then matches and counts the same stems.

PostgreSQL keeps at most 256 positions of one stem in a passage and positions up to 16,383; a
~250-word passage is far from either.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from engine.store.vocabulary import TOKENIZER

MAX_POSITION = 16_383
_TITLE, _TEXT = 0, 1


@dataclass(frozen=True)
class Lexemes:
    """One passage's token count (BM25's document length) and its stems as a tsvector literal."""

    length: int
    tsvector: str


class FtsLexemes:
    """Turns (rowid, title, text) rows into :class:`Lexemes` with FTS5's own tokenizer."""

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:")
        self._conn.execute(f"CREATE VIRTUAL TABLE words USING fts5(title, text, tokenize = '{TOKENIZER}')")
        self._conn.execute("CREATE VIRTUAL TABLE words_vocab USING fts5vocab(words, 'instance')")

    def close(self) -> None:
        self._conn.close()

    def of(self, rows: Sequence[tuple[int, str, str]]) -> dict[int, Lexemes]:
        """Each row's lexemes, by rowid."""
        with self._conn:
            self._conn.execute("DELETE FROM words")
            self._conn.executemany("INSERT INTO words(rowid, title, text) VALUES (?,?,?)", rows)
        positions: dict[int, dict[int, dict[str, list[int]]]] = {rowid: {_TITLE: {}, _TEXT: {}} for rowid, _, _ in rows}
        for term, doc, column, offset in self._conn.execute("SELECT term, doc, col, offset FROM words_vocab"):
            positions[doc][_TITLE if column == "title" else _TEXT].setdefault(term, []).append(int(offset))
        return {rowid: _lexemes(columns) for rowid, columns in positions.items()}


def _lexemes(columns: dict[int, dict[str, list[int]]]) -> Lexemes:
    title_length = sum(len(offsets) for offsets in columns[_TITLE].values())
    text_length = sum(len(offsets) for offsets in columns[_TEXT].values())
    merged: dict[str, list[int]] = {}
    for term, offsets in columns[_TITLE].items():
        merged.setdefault(term, []).extend(offset + 1 for offset in offsets)
    for term, offsets in columns[_TEXT].items():
        merged.setdefault(term, []).extend(title_length + offset + 1 for offset in offsets)
    return Lexemes(title_length + text_length, tsvector_literal(merged))


def tsvector_literal(positions: dict[str, list[int]]) -> str:
    """``'stem':1,5 'other':2`` for PostgreSQL's tsvector input (positions clamped as PostgreSQL would)."""
    parts = []
    for term in sorted(positions):
        at = sorted({min(position, MAX_POSITION) for position in positions[term]})
        parts.append(f"{quote_lexeme(term)}:{','.join(map(str, at))}")
    return " ".join(parts)


def quote_lexeme(term: str) -> str:
    """A stem as a quoted tsvector/tsquery lexeme: quotes doubled, backslashes escaped."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"
