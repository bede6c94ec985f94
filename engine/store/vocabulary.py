"""The vocabulary of a ``passages_fts`` table (the catalog's or a datastore's): which stems it holds
and how many passages hold each.

FTS5 answers this itself through an ``fts5vocab`` table. That table is connection-local
(``temp``), so it is made on the read connection that queries it, before the connection turns
read-only: creating a temp table is still a write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

# What every passages_fts table is built with: query words are stemmed by the same tokenizer, so a
# stem always matches the index's own vocabulary.
TOKENIZER = "porter unicode61 remove_diacritics 2"

Execute = Callable[[str, Sequence[object]], list[tuple]]


def _checked(table: str) -> str:
    # The name is spliced into SQL (identifiers cannot be bound as parameters).
    if not table.replace("_", "").isalnum():
        raise ValueError(f"not a table name: {table!r}")
    return table


def vocabulary_table_sql(table: str = "passages_fts") -> str:
    """SQL creating the connection-local ``fts5vocab`` table :class:`FtsVocabulary` reads (run it once
    per connection, before ``PRAGMA query_only``)."""
    table = _checked(table)
    return f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_vocab USING fts5vocab(main, {table}, 'row')"


class FtsVocabulary:
    """Reads of one FTS5 table's vocabulary through ``execute`` (a read query on the connection that
    holds the table, on which :func:`vocabulary_table_sql` has run)."""

    def __init__(self, execute: Execute, table: str = "passages_fts") -> None:
        self._execute = execute
        self._table = _checked(table)

    def rows(self) -> int:
        """How many passages the table indexes."""
        return int(self._execute(f"SELECT count(*) FROM {self._table}", ())[0][0])

    def frequency(self, stem: str) -> int:
        """How many passages hold ``stem`` (0 when none does)."""
        found = self._execute(f"SELECT doc FROM temp.{self._table}_vocab WHERE term = ?", (stem,))
        return int(found[0][0]) if found else 0

    def stems_between(self, low: str, high: str) -> dict[str, int]:
        """The stems in [low, high) with their passage counts (fts5vocab answers a range on ``term``
        from its index: ~25 ms for 40k stems of a 1M-stem table)."""
        rows = self._execute(f"SELECT term, doc FROM temp.{self._table}_vocab WHERE term >= ? AND term < ?",
                             (low, high))
        return {term: int(documents) for term, documents in rows}


__all__ = ["TOKENIZER", "FtsVocabulary", "vocabulary_table_sql"]
