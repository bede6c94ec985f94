"""Reading the catalog for search: the library's passages as search needs them, on a connection of
their own.

Search keeps a read connection apart from the catalog's (WAL lets it read while the importer writes,
so a search never waits on an ingest) and never writes through it. Passages of reference lists are
left out of search: they hold other papers' titles, match many queries and are never the evidence a
question wants.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Collection, Sequence
from pathlib import Path

from engine.bibliography import Bibliography, titled_by_file_name
from engine.errors import StoreError
from engine.sqlite import connect_read_only, writable_place
from engine.store.codec import bibliography_columns, decode_bibliography
from engine.store.vocabulary import FtsVocabulary, vocabulary_table_sql
from engine.types import LIBRARY_SOURCE, Passage, SearchHit


class SearchReads:
    """Read-only queries on the catalog (``library.db``) for the library's search source."""

    def __init__(self, catalog_path: Path) -> None:
        try:
            conn = (sqlite3.connect(str(catalog_path), check_same_thread=False, timeout=30, isolation_level=None)
                    if writable_place(catalog_path) else connect_read_only(catalog_path))  # a read-only library
            conn.execute(vocabulary_table_sql())
            conn.execute("PRAGMA query_only=ON")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"The library database {catalog_path} cannot be opened for search ({exc}).") from None
        self._conn = conn
        self._lock = threading.RLock()
        # The stems of the catalog's FTS index with their passage counts (common words, spelling).
        self.vocabulary = FtsVocabulary(self.query)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """Rows of one search query; SQLite errors become a StoreError saying what to do."""
        try:
            with self._lock:
                return self._conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            # The query builder makes only quoted terms; this is damage, not user input.
            raise StoreError(f"The library's search index could not be read ({exc}); run `quire doctor`.") from None

    def lexical(self, fts_query: str, score: str, k: int, doc_ids: Collection[str] | None = None
                ) -> list[tuple[str, float]]:
        """(passage id, -score) of the searchable passages matching ``fts_query``, best first; ``score``
        is an FTS5 ranking expression on ``passages_fts`` (lower is better, as bm25() gives it)."""
        sql = (f"SELECT p.id, -{score} FROM passages_fts JOIN passages p ON p.rowid = passages_fts.rowid "
               "WHERE passages_fts MATCH ? AND p.is_reference = 0")
        params: list[object] = [fts_query]
        if doc_ids is not None:
            sql += " AND p.doc_id IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(doc_ids)))
        sql += f" ORDER BY {score}, p.rowid LIMIT ?"
        params.append(int(k))
        return [(passage_id, float(value)) for passage_id, value in self.query(sql, params)]

    def searchable(self, doc_ids: Collection[str] | None = None) -> list[tuple[str, str]]:
        """(passage id, content hash) of every searchable passage (of ``doc_ids`` only, when given), in
        the order they were stored."""
        sql = "SELECT id, content_hash FROM passages WHERE is_reference = 0"
        params: list[object] = []
        if doc_ids is not None:
            sql += " AND doc_id IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(doc_ids)))
        with self._lock:
            return self._conn.execute(sql + " ORDER BY rowid", params).fetchall()

    def content_hashes(self, passage_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(passage id, content hash) of those of ``passage_ids`` that exist."""
        with self._lock:
            return self._conn.execute("SELECT id, content_hash FROM passages WHERE id IN (SELECT value FROM "
                                      "json_each(?))", (json.dumps(list(passage_ids)),)).fetchall()

    def existing(self, passage_ids: Sequence[str]) -> set[str]:
        """Those of ``passage_ids`` still in the catalog (a removed paper's vectors outlive it in the index)."""
        with self._lock:
            rows = self._conn.execute("SELECT id FROM passages WHERE id IN (SELECT value FROM json_each(?))",
                                      (json.dumps(list(passage_ids)),)).fetchall()
        return {row[0] for row in rows}

    def hits(self, passage_ids: Sequence[str]) -> list[SearchHit]:
        """The passages as SearchHits (score 0) in the given order; unknown ids are skipped."""
        if not passage_ids:
            return []
        with self._lock:
            rows = self._conn.execute(
                f"SELECT p.id, p.doc_id, p.text, p.page_start, p.page_end, p.is_reference, d.path, "
                f"{bibliography_columns('d')} "
                "FROM passages p JOIN documents d ON d.id = p.doc_id WHERE p.id IN (SELECT value FROM json_each(?))",
                (json.dumps(list(passage_ids)),)).fetchall()
        by_id = {row[0]: row for row in rows}
        found: list[SearchHit] = []
        for passage_id in passage_ids:
            row = by_id.get(passage_id)
            if row is None:
                continue
            found.append(SearchHit(passage_id=row[0], doc_id=row[1], source=LIBRARY_SOURCE,
                                   bib=titled_by_file_name(decode_bibliography(row[7:]), row[6]), text=row[2],
                                   page=row[3], page_end=row[4],
                                   is_reference=bool(row[5])))
        return found

    def papers(self) -> list[SearchHit]:
        """One stand-in hit per document (id, title, DOI, arXiv id): what cross-source dedupe matches on."""
        with self._lock:
            rows = self._conn.execute("SELECT id, title, doi, arxiv_id FROM documents WHERE passage_count > 0"
                                      ).fetchall()
        return [SearchHit(passage_id="", doc_id=r[0], source=LIBRARY_SOURCE,
                          bib=Bibliography(title=r[1], doi=r[2] or "", arxiv_id=r[3] or ""), text="") for r in rows]

    def passages_for_embedding(self, passage_ids: Sequence[str]) -> list[Passage]:
        """Light Passages (text, title, hash; no boxes): all embedding needs."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT p.id, p.doc_id, p.ordinal, p.text, d.title, p.page_start, p.page_end, p.content_hash "
                "FROM passages p JOIN documents d ON d.id = p.doc_id WHERE p.id IN (SELECT value FROM json_each(?))",
                (json.dumps(list(passage_ids)),)).fetchall()
        return [Passage(id=r[0], doc_id=r[1], ordinal=r[2], text=r[3], title=r[4], page_start=r[5], page_end=r[6],
                        char_start=0, char_end=0, rects=(), content_hash=r[7]) for r in rows]


__all__ = ["SearchReads"]
