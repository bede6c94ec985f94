"""A datastore on a PostgreSQL server as a :class:`~engine.retrieve.source.PassageSource`.

Passage ids and hits are those of a local datastore (``<name>:<record id>#<ordinal>``, the record's
own id as ``doc_id``, its DOI and arXiv id in ``bib``), so fusion, the DOI merge with the library and
citations treat both alike.

BM25 is computed by the server exactly as the local postings compute it (FTS5's k1, b and IDF,
equal column weights, the same common-word pruning): the GIN index finds the passages holding a
query stem, ``setweight``/``ts_filter`` keep only the query's stems of each, and their position
counts are the term frequencies. Dense search is pgvector's HNSW over float16 (``halfvec``) vectors
by inner product (the embeddings are normalised: cosine).

Every failure (the server down or restarted, a refused password, a dropped table, a query over its
time limit) raises :class:`~engine.errors.DatastoreUnavailableError` naming the datastore; search
then leaves this datastore out and the library and local datastores still answer. The connection
is opened at the first search, not when Quire starts, and opened again after a failure.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.bibliography import Bibliography
from engine.datastore.server.connection import STATEMENT_TIMEOUT_S, connect, driver, unavailable
from engine.datastore.server.lexemes import quote_lexeme
from engine.datastore.server.schema import check_schema_name, read_meta, schema_problem
from engine.errors import DatastoreUnavailableError, EngineError
from engine.index.build import FLAT_LIMIT
from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.retrieve.fts import FtsStemmer, quoted_words, uncommon_words
from engine.retrieve.postings import K1, B, bm25_idf
from engine.retrieve.source import ScoredId
from engine.types import SearchHit

log = logging.getLogger(__name__)

# HNSW returns at most ef_search neighbours. On the real MiniLM vectors of the benchmark corpus, the
# 100 candidates search asks for matched exact search's at 0.91 / 0.96 / 0.99 (top 100) and 0.93 /
# 0.96 / 0.99 (top 10) with ef_search 100 / 200 / 400 (benchmarks/pg_datastore.py): four times k.
# At 1M synthetic passages, 400 finds 0.996 of the exact top 10 in ~11 ms (ef_construction 128).
EF_SEARCH = 100
EF_SEARCH_PER_RESULT = 4
# After a failure, calls within this many seconds fail at once with the same message instead of
# waiting for the server again: one search asks a source many times (spelling, BM25, dense, hits).
RETRY_AFTER_S = 3.0
VOCABULARY_LIMIT = 50_000
# The most of a hit's fields read from a server, in characters. Quire publishes passages of ~250 words
# (under 2,000 characters) and titles of a line; a damaged or hostile server could hold a row of
# gigabytes, which would otherwise be read whole into memory at every search that finds it.
MAX_TEXT_CHARS = 50_000
MAX_FIELD_CHARS = 4_000


class ServerDatastoreSource:
    """Search over one datastore held in a PostgreSQL schema."""

    def __init__(self, name: str, conninfo: str, passfile: Path | None, *, schema: str = "quire",
                 statement_timeout_s: float = STATEMENT_TIMEOUT_S) -> None:
        self._name = name
        self.conninfo = conninfo
        self.passfile = passfile
        self.schema = check_schema_name(schema)
        self.statement_timeout_s = statement_timeout_s
        self._prefix = f"{name}:"
        self._conn: Any = None
        self._meta: dict[str, str] = {}
        self._ef_search = 0
        self._failure: DatastoreUnavailableError | None = None
        self._failed_at = 0.0
        self._lock = threading.RLock()
        self._stemmer = FtsStemmer()

    @property
    def name(self) -> str:
        return self._name

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                except Exception:  # closing a broken connection may fail; it is dropped all the same
                    log.debug("closing the connection of %s failed", self._name, exc_info=True)
                self._conn = None

    # --- connection ------------------------------------------------------------------------

    def _query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """Run one read; any failure closes the connection (the next search opens a new one) and is named."""
        psycopg = driver()
        with self._lock:
            if self._failure is not None and time.monotonic() - self._failed_at < RETRY_AFTER_S:
                raise self._failure
            try:
                try:
                    reused = self._conn is not None
                    rows = self._run(self._connection(), sql, params)
                except psycopg.OperationalError as exc:
                    # A connection the server closed since the last search (restarted, or the session was
                    # ended): one new connection, once; a query stopped by its time limit is not retried.
                    if not reused or isinstance(exc, psycopg.errors.QueryCanceled):
                        raise
                    self.close()
                    rows = self._run(self._connection(), sql, params)
            except (psycopg.Error, DatastoreUnavailableError) as exc:
                failure = exc if isinstance(exc, DatastoreUnavailableError) else unavailable(
                    self._name, self.conninfo, exc, self.statement_timeout_s)
                lost = (self._conn is None or self._conn.broken or self._conn.closed
                        or isinstance(exc, DatastoreUnavailableError | psycopg.errors.AdminShutdown))
                self.close()
                if lost:  # no server to talk to: the rest of this search is not kept waiting for it again
                    self._failure, self._failed_at = failure, time.monotonic()
                raise failure from None
            self._failure = None
            return rows

    @staticmethod
    def _run(conn: Any, sql: str, params: Sequence[Any] | dict[str, Any]) -> list[tuple[Any, ...]]:
        cursor = conn.execute(sql, params)
        return list(cursor.fetchall()) if cursor.description is not None else []  # SET has no rows

    def _connection(self) -> Any:
        if self._conn is not None and not self._conn.closed:
            return self._conn
        conn = connect(self._name, self.conninfo, self.passfile, statement_timeout_s=self.statement_timeout_s)
        try:
            problem = schema_problem(conn, self.schema)
            if problem:
                raise DatastoreUnavailableError(f"the server datastore {self._name!r} {problem}")
            self._meta = read_meta(conn, self.schema)
        except BaseException:
            conn.close()
            raise
        self._conn, self._ef_search = conn, 0
        return conn

    def describe(self) -> dict[str, str]:
        """The datastore's facts (counts, model, state) as the server holds them; connects if needed."""
        with self._lock:
            self._query("SELECT 1")
            return dict(self._meta)

    def public_id(self, record_id: str, ordinal: int) -> str:
        return f"{self._prefix}{record_id}#{ordinal}"

    def _local(self, passage_id: str) -> tuple[str, int] | None:
        if not passage_id.startswith(self._prefix):
            return None
        record_id, _, ordinal = passage_id[len(self._prefix):].rpartition("#")
        return (record_id, int(ordinal)) if record_id and ordinal.isdigit() else None

    def _record_filter(self, doc_ids: Collection[str] | None, params: dict[str, Any]) -> str:
        if doc_ids is None:
            return ""
        params["docs"] = list(doc_ids)
        return f" AND p.record_rowid IN (SELECT rowid FROM {self.schema}.records WHERE id = ANY(%(docs)s))"

    # --- lexical ---------------------------------------------------------------------------

    def lexical(self, fts_query: str, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        """BM25 over the server's stems, best first, ties by passage order (as the local datastore ranks).

        Search sends OR queries only (engine.retrieve.fts); an AND query finds nothing here.
        """
        if k <= 0 or not fts_query or " AND " in fts_query:
            return []
        words = quoted_words(fts_query)
        stems = self._stems(words)
        if not stems:
            return []
        frequencies = self._frequencies(stems)
        rows = int(self._meta.get("passages", "0"))
        stems = uncommon_words(stems, stems, lambda stem: frequencies.get(stem, 0), rows)
        stems = [stem for stem in stems if frequencies.get(stem, 0) > 0]
        if not stems or rows <= 0:
            return []
        idf = bm25_idf(rows, np.array([frequencies[stem] for stem in stems], dtype=np.float64))
        average_length = max(int(self._meta.get("total_length", "0")) / rows, 1e-9)
        params: dict[str, Any] = {"stems": stems, "idf": idf.tolist(), "k": int(k),
                                  "query": " | ".join(quote_lexeme(stem) for stem in dict.fromkeys(stems)),
                                  "norm_a": K1 * (1 - B), "norm_b": K1 * B / average_length}
        s = self.schema
        found = self._query(
            f"""WITH matched AS (
                  SELECT p.rowid, p.record_rowid, p.ordinal, p.length,
                         ts_filter(setweight(p.lexemes, 'A', %(stems)s::text[]), '{{a}}') AS held
                  FROM {s}.passages p WHERE p.lexemes @@ %(query)s::tsquery{self._record_filter(doc_ids, params)}),
                scored AS (
                  SELECT m.rowid, m.record_rowid, m.ordinal,
                         sum(q.idf * u.tf * {K1 + 1!r} / (u.tf + %(norm_a)s + %(norm_b)s * m.length)) AS score
                  FROM matched m
                  CROSS JOIN LATERAL (SELECT lexeme, cardinality(positions) AS tf FROM unnest(m.held)) u
                  JOIN unnest(%(stems)s::text[], %(idf)s::float8[]) AS q(stem, idf) ON q.stem = u.lexeme
                  GROUP BY m.rowid, m.record_rowid, m.ordinal
                  ORDER BY score DESC, m.rowid LIMIT %(k)s)
                SELECT r.id, scored.ordinal, scored.score FROM scored JOIN {s}.records r
                  ON r.rowid = scored.record_rowid ORDER BY scored.score DESC, scored.rowid""", params)
        return [(self.public_id(record_id, ordinal), float(score)) for record_id, ordinal, score in found]

    def _stems(self, words: Sequence[str]) -> list[str]:
        stems = self._stemmer.stems(words) if words else None
        if stems is not None:
            return stems
        # A word FTS5 splits into several tokens: each token is one more OR'd stem.
        return [stem for word in words for stem in (self._stemmer.stems([word]) or [])]

    def _frequencies(self, stems: Sequence[str]) -> dict[str, int]:
        rows = self._query(f"SELECT stem, passages FROM {self.schema}.terms WHERE stem = ANY(%s)", (list(stems),))
        return {str(stem): int(count) for stem, count in rows}

    def stem_frequencies(self, low: str, high: str) -> dict[str, int]:
        """Stems in [low, high) with their passage counts (the spelling corrector's vocabulary)."""
        if high.endswith("\0"):  # PostgreSQL text holds no NUL: below "x\0" is "x" or less, in byte order
            condition, bound = "stem <= %s", high.rstrip("\0")
        else:
            condition, bound = "stem < %s", high
        # The most used stems of the range only: a letter's range of a large corpus holds hundreds of
        # thousands of rare stems, which spelling correction never proposes anyway.
        rows = self._query(f"SELECT stem, passages FROM {self.schema}.terms WHERE stem >= %s AND {condition} "
                           f"ORDER BY passages DESC LIMIT {VOCABULARY_LIMIT}", (low, bound))
        return {str(stem): int(count) for stem, count in rows}

    # --- dense -----------------------------------------------------------------------------

    def dense(self, query_vector: np.ndarray, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        """Nearest passages by inner product: HNSW over a large datastore, exact over a small one or ``doc_ids``."""
        if k <= 0:
            return []
        vector = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        with self._lock:
            self._query("SELECT 1")  # connects (and reads the meta) before the model is checked
            self._check_model(vector)
            params: dict[str, Any] = {"q": _vector_text(vector), "k": int(k)}
            s = self.schema
            # Exact (a scan, not the index) where the local datastore is exact too: a datastore as small as
            # its flat index, or a few records; HNSW above.
            if doc_ids is None and int(self._meta.get("passages", "0")) > FLAT_LIMIT:
                self._set_ef_search(max(EF_SEARCH, EF_SEARCH_PER_RESULT * int(k)))
                order = "p.embedding <#> %(q)s::halfvec"
            else:
                order = "(p.embedding <#> %(q)s::halfvec) + 0"
            found = self._query(
                f"""WITH near AS (
                      SELECT p.rowid, p.record_rowid, p.ordinal, p.embedding <#> %(q)s::halfvec AS distance
                      FROM {s}.passages p WHERE p.embedding IS NOT NULL{self._record_filter(doc_ids, params)}
                      ORDER BY {order} LIMIT %(k)s)
                    SELECT r.id, near.ordinal, -near.distance FROM near JOIN {s}.records r
                      ON r.rowid = near.record_rowid ORDER BY near.distance, near.rowid""", params)
        return [(self.public_id(record_id, ordinal), float(score)) for record_id, ordinal, score in found]

    def _check_model(self, vector: np.ndarray) -> None:
        dimension = int(self._meta.get("embedding_dimension", "0") or 0)
        if dimension == 0:
            raise EngineError(f"the server datastore {self._name!r} holds no vectors; it is searched by BM25 only")
        if vector.shape[0] != dimension:
            raise EngineError(f"the server datastore {self._name!r} was embedded by "
                              f"{self._meta.get('embedding_model')} ({dimension} dimensions), not by the model "
                              "Quire uses now; it is searched by BM25 only until the models agree")

    def _set_ef_search(self, ef_search: int) -> None:
        if ef_search != self._ef_search:
            self._query(f"SET hnsw.ef_search = {int(min(ef_search, 1000))}")
            self._ef_search = ef_search

    def vectors(self, passage_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these passages (float16 on the server, float32 here)."""
        wanted = {local: pid for pid in passage_ids if (local := self._local(pid)) is not None}
        if not wanted:
            return {}
        rows = self._query(
            f"""SELECT r.id, p.ordinal, p.embedding::text FROM unnest(%s::text[], %s::int[]) AS w(id, ordinal)
                JOIN {self.schema}.records r ON r.id = w.id
                JOIN {self.schema}.passages p ON p.record_rowid = r.rowid AND p.ordinal = w.ordinal
                WHERE p.embedding IS NOT NULL""",
            ([record_id for record_id, _ in wanted], [ordinal for _, ordinal in wanted]))
        return {wanted[(record_id, ordinal)]: np.array(json.loads(text), dtype=np.float32)
                for record_id, ordinal, text in rows}

    # --- hits ------------------------------------------------------------------------------

    def hits(self, passage_ids: Sequence[str]) -> list[SearchHit]:
        """The passages as SearchHits in the given order; ids of other sources or unknown ids are skipped."""
        wanted = {local: pid for pid in passage_ids if (local := self._local(pid)) is not None}
        if not wanted:
            return []
        rows = self._query(
            f"""SELECT r.id, p.ordinal, left(r.title, {MAX_FIELD_CHARS}), left(p.text, {MAX_TEXT_CHARS}),
                       left(r.authors, {MAX_TEXT_CHARS}), r.year, left(r.doi, {MAX_FIELD_CHARS}),
                       left(r.arxiv_id, {MAX_FIELD_CHARS}), left(r.url, {MAX_FIELD_CHARS})
                FROM unnest(%s::text[], %s::int[]) AS w(id, ordinal)
                JOIN {self.schema}.records r ON r.id = w.id
                JOIN {self.schema}.passages p ON p.record_rowid = r.rowid AND p.ordinal = w.ordinal""",
            ([record_id for record_id, _ in wanted], [ordinal for _, ordinal in wanted]))
        found: dict[str, SearchHit] = {}
        for record_id, ordinal, title, text, authors, year, doi, arxiv_id, url in rows:
            bib = Bibliography(title=title, authors=tuple(_authors(authors)), year=year, doi=doi, arxiv_id=arxiv_id,
                               url=url)
            passage_id = wanted[(record_id, ordinal)]
            found[passage_id] = SearchHit(passage_id=passage_id, doc_id=record_id, source=self._name, bib=bib,
                                          text=text)
        return [found[pid] for pid in passage_ids if pid in found]

    def embed_pending(self, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> int:
        """Nothing to embed here: a server datastore's vectors are written by whoever publishes it."""
        return 0


def _vector_text(vector: np.ndarray) -> str:
    if not np.all(np.isfinite(vector)):
        raise EngineError("the question's embedding holds NaN or infinite values")
    return "[" + ",".join(f"{value:.7g}" for value in vector.tolist()) + "]"


def _authors(value: str) -> list[str]:
    try:
        loaded = json.loads(value or "[]")
    except (ValueError, RecursionError):
        return []
    return [str(item) for item in loaded] if isinstance(loaded, list) else []

