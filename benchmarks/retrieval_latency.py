"""Search latency at 10k / 100k / 1M passages: lexical (FTS5 BM25), dense, hybrid (the product's Retriever).

Passages are real text: the sample datastore cut into ~250-word passages, repeated (each copy
with its words shuffled, so posting lists grow like a real collection's) until the size is
reached; they live in an on-disk SQLite FTS5 table with the catalog's tokenizer and ranking.
Lexical search is timed both ways a datastore can run it: FTS5 ``ORDER BY bm25`` and the
precomputed postings (engine/retrieve/postings.py) that imports now build; hybrid uses the
postings, as a datastore does.
Vectors are synthetic (clustered 384-d, as in index_speed.py) and indexed the way the product
indexes them (exact up to FLAT_LIMIT, IVF-SQ8 above). Queries are ScholarQA-Multi questions;
hybrid includes embedding the question with the bundled MiniLM (int8 as by default; --fp32), BM25, dense search,
fusion, both feedback lists, spelling, paper evidence, paper-local BM25, fetching the hits and dedupe.
Reported: p50/p95 per query, build time, RSS and sizes on disk.

    python benchmarks/retrieval_latency.py [--sizes 10000 100000 1000000] [--queries 50] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from retrieval_common import load_distractors, load_questions

from engine.bibliography import Bibliography
from engine.embed import SentenceTransformerEmbedder
from engine.index import build_index, save_index
from engine.retrieve.fts import (
    CommonTerms,
    FtsStemmer,
    bm25_expression,
    build_fts_query,
)
from engine.retrieve.postings import Bm25Postings, PostingsStamp, build_postings, search_fts_query
from engine.retrieve.retriever import RetrievalOptions, Retriever
from engine.retrieve.source import ScoredId
from engine.store.vocabulary import FtsVocabulary, vocabulary_table_sql
from engine.types import SearchHit

DIMENSION = 384


class DiskSource:
    """A PassageSource over an on-disk FTS5 table and a vector index (what a datastore holds)."""

    def __init__(self, db: Path, index: Any, postings: Bm25Postings | None = None,
                 stored: np.ndarray | None = None) -> None:
        self.conn = sqlite3.connect(str(db))
        self.index = index
        self.stored = stored  # the passages' vectors on disk (memory-mapped), as a datastore's cache holds them
        self.postings = postings
        self.conn.execute(vocabulary_table_sql())
        self.vocabulary = FtsVocabulary(lambda sql, params: self.conn.execute(sql, params).fetchall())
        self.common_terms = CommonTerms(self.vocabulary)
        self.stemmer = FtsStemmer()

    @property
    def name(self) -> str:
        return "bench"

    def lexical(self, fts_query: str, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        if self.postings is not None:  # as DatastoreSource does
            found = search_fts_query(self.postings, self.stemmer, fts_query, k) or []
            return [(str(rowid), score) for rowid, score in found]
        score = bm25_expression("passages_fts")
        rows = self.conn.execute(f"SELECT rowid, -{score} FROM passages_fts WHERE passages_fts MATCH ? "
                                 f"ORDER BY {score} LIMIT ?", (self.common_terms.prune(fts_query), k)).fetchall()
        return [(str(rowid), float(value)) for rowid, value in rows]

    def dense(self, query_vector: np.ndarray, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        return self.index.search(query_vector, k)

    def vectors(self, passage_ids: Sequence[str]) -> dict[str, np.ndarray]:
        if self.stored is None:
            return {}
        return {p: np.array(self.stored[int(p)]) for p in passage_ids}

    def stem_frequencies(self, low: str, high: str) -> dict[str, int]:
        if self.postings is not None:  # as DatastoreSource does
            return self.postings.stems_between(low, high)
        return self.vocabulary.stems_between(low, high)

    def hits(self, passage_ids: Sequence[str]) -> list[SearchHit]:
        rows = self.conn.execute("SELECT rowid, title, text FROM passages_fts WHERE rowid IN (SELECT value FROM "
                                 "json_each(?))", (json.dumps([int(p) for p in passage_ids]),)).fetchall()
        by_id = {str(r[0]): r for r in rows}
        return [SearchHit(passage_id=p, doc_id=p, source="bench", bib=Bibliography(title=by_id[p][1]), text=by_id[p][2])
                for p in passage_ids if p in by_id]

    def embed_pending(self, *args: object, **kwargs: object) -> int:
        return 0


def build_fts(path: Path, size: int, texts: Sequence[tuple[str, str]]) -> float:
    started = time.perf_counter()
    conn = sqlite3.connect(str(path))
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("CREATE VIRTUAL TABLE passages_fts USING fts5(title, text, tokenize = 'porter unicode61 "
                 "remove_diacritics 2')")
    rng = random.Random(0)
    batch: list[tuple[int, str, str]] = []
    for rowid in range(size):
        title, text = texts[rowid % len(texts)]
        if rowid >= len(texts):
            words = text.split()
            rng.shuffle(words)
            text = " ".join(words)
        batch.append((rowid, title, text))
        if len(batch) == 20_000:
            conn.executemany("INSERT INTO passages_fts(rowid, title, text) VALUES (?,?,?)", batch)
            batch = []
    conn.executemany("INSERT INTO passages_fts(rowid, title, text) VALUES (?,?,?)", batch)
    conn.commit()
    conn.execute("INSERT INTO passages_fts(passages_fts) VALUES ('optimize')")
    conn.commit()
    conn.close()
    return time.perf_counter() - started


def clustered_vectors(count: int, seed: int = 0, clusters: int = 256) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, DIMENSION)).astype(np.float32)
    out = np.empty((count, DIMENSION), dtype=np.float32)
    for start in range(0, count, 100_000):
        n = min(100_000, count - start)
        chosen = centres[rng.integers(0, clusters, n)]
        block = chosen + 0.6 * rng.standard_normal((n, DIMENSION)).astype(np.float32)
        out[start:start + n] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def timings(run: Callable[[str], object], queries: Sequence[str]) -> dict[str, float]:
    run(queries[0])  # warm caches
    seconds = []
    for query in queries:
        started = time.perf_counter()
        run(query)
        seconds.append(time.perf_counter() - started)
    seconds.sort()
    return {"p50_ms": 1000 * statistics.median(seconds), "p95_ms": 1000 * seconds[int(0.95 * (len(seconds) - 1))]}


def measure(size: int, texts: Sequence[tuple[str, str]], queries: Sequence[str], embedder: Any) -> dict[str, Any]:
    process = psutil.Process()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "fts.db"
        fts_seconds = build_fts(db, size, texts)
        rss_before = process.memory_info().rss  # before the vectors: they are freed once indexed
        vectors = clustered_vectors(size)
        started = time.perf_counter()
        index = build_index("synthetic-384", DIMENSION,
                            (([str(i) for i in range(s, min(s + 50_000, size))], vectors[s:s + 50_000])
                             for s in range(0, size, 50_000)), expected_count=size)
        index_seconds = time.perf_counter() - started
        stored_file = Path(folder) / "vectors.f32"
        vectors.tofile(stored_file)
        del vectors
        stored = np.memmap(stored_file, dtype=np.float32, mode="r", shape=(size, DIMENSION))
        index_file = Path(folder) / "vectors.index"
        save_index(index, index_file)
        index_rss = process.memory_info().rss - rss_before
        started = time.perf_counter()
        postings_folder = Path(folder) / "bm25"
        build_postings(lambda: closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)),
                       postings_folder, PostingsStamp(size, size - 1))
        postings_seconds = time.perf_counter() - started
        postings_mb = sum(p.stat().st_size for p in postings_folder.iterdir()) / 2**20
        fts_source = DiskSource(db, index, stored=stored)
        rss_before = process.memory_info().rss
        source = DiskSource(db, index, Bm25Postings(postings_folder), stored=stored)
        query_vector = embedder.embed([queries[0]])[0]
        lexical_fts5 = timings(lambda q: fts_source.lexical(build_fts_query(q), 100), queries)
        lexical = timings(lambda q: source.lexical(build_fts_query(q), 100), queries)
        dense = timings(lambda q: source.dense(query_vector, 100), queries)
        retriever = Retriever([source], embedder)
        hybrid = timings(lambda q: retriever.search(q, k=10), queries)
        # The search before lists went uncapped and paper-local BM25 (timed in the same run, same load).
        before = Retriever([source], embedder, options=RetrievalOptions(per_paper=3, within_paper=0.0))
        hybrid_before = timings(lambda q: before.search(q, k=10), queries)
        hybrid_fts5 = timings(lambda q: Retriever([fts_source], embedder).search(q, k=10), queries)
        row = {"passages": size, "index_kind": index.kind, "fts_build_s": round(fts_seconds, 1),
               "index_build_s": round(index_seconds, 1), "fts_mb": round(db.stat().st_size / 2**20, 1),
               "index_mb": round(index_file.stat().st_size / 2**20, 1),
               "index_rss_mb": round(index_rss / 2**20, 1),
               "postings_build_s": round(postings_seconds, 1), "postings_mb": round(postings_mb, 1),
               # The postings are memory-mapped: what the queries touched, as resident pages.
               "postings_rss_mb": round((process.memory_info().rss - rss_before) / 2**20, 1),
               "lexical_fts5": lexical_fts5, "lexical": lexical, "dense": dense, "hybrid": hybrid,
               "hybrid_capped_no_within_paper": hybrid_before,
               "hybrid_fts5": hybrid_fts5, "load_average": os.getloadavg()}
        source.conn.close()
        fts_source.conn.close()
        return row


def _ms(timing: dict[str, float]) -> str:
    return f"{timing['p50_ms']:.1f}/{timing['p95_ms']:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--fp32", action="store_true", help="embed questions with the fp32 model, not the int8 default")
    args = parser.parse_args()
    questions, _ = load_questions()
    queries = [q.text for q in questions[: args.queries]]
    texts = [(r.title, r.text) for r in load_distractors()]
    embedder = SentenceTransformerEmbedder(quantize=not args.fp32)  # the product's default is int8
    embed = timings(lambda q: embedder.embed([q]), queries)
    print(f"query embedding ({embedder.model_id}, CPU): p50/p95 {_ms(embed)}", flush=True)
    results: list[dict[str, Any]] = [{"what": "query embedding", "model": embedder.model_id, **embed}]
    for size in args.sizes:
        row = measure(size, texts, queries, embedder)
        results.append(row)
        print(f"{size:>9,} passages ({row['index_kind']}): lexical p50/p95 FTS5 {_ms(row['lexical_fts5'])}, "
              f"postings {_ms(row['lexical'])}; dense {_ms(row['dense'])}; hybrid {_ms(row['hybrid'])} "
              f"(before within-paper BM25: {_ms(row['hybrid_capped_no_within_paper'])}) "
              f"(with FTS5: {_ms(row['hybrid_fts5'])}); FTS {row['fts_mb']} MB built in {row['fts_build_s']} s; "
              f"postings {row['postings_mb']} MB built in {row['postings_build_s']} s, +{row['postings_rss_mb']} MB "
              f"RSS; index {row['index_mb']} MB on disk, +{row['index_rss_mb']} MB RSS; load {row['load_average']}",
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
