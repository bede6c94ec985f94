"""Vector index speed, memory and recall at 10k / 100k / 1M synthetic 384-d vectors.

Compares exact search (FlatIndex) with the compressed candidates — IVF-SQ8 (IVFIndex), IVF-PQ
and HNSW (raw FAISS, for comparison) — and reports, per size: build time, p50/p95 latency of
single-query search, recall@10 against exact search, index file size and the RSS of a fresh
process that loads the saved index. Quire's own indexes are measured through their public API
(string passage ids in, string ids out), so id mapping is included.

Synthetic vectors are clustered, not uniform: real embeddings sit in topical clusters, and
uniform random 384-d vectors are a worst case no ANN index meets (and no library looks like).
Queries are new points drawn from the same clusters. Usage:

    python benchmarks/index_speed.py [--sizes 10000 100000 1000000] [--queries 200] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import faiss
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.index import FlatIndex, IVFIndex, build_index, save_index

DIMENSION = 384
MODEL_ID = "synthetic-384"
K = 10
NPROBES = (8, 16, 32, 64)


def clustered_vectors(count: int, seed: int, centers: np.ndarray, spread: float = 1.3) -> np.ndarray:
    """Unit vectors around ``centers`` (cosine to their centre ≈ 0.6), cluster sizes skewed (Zipf-like)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, len(centers) + 1) ** 0.7
    assignment = rng.choice(len(centers), size=count, p=weights / weights.sum())
    out = np.empty((count, DIMENSION), dtype=np.float32)
    for start in range(0, count, 100_000):
        rows = assignment[start:start + 100_000]
        noise = rng.standard_normal((len(rows), DIMENSION), dtype=np.float32) * (spread / np.sqrt(DIMENSION))
        block = centers[rows] + noise
        out[start:start + len(rows)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def latencies_ms(search: Any, queries: np.ndarray) -> tuple[float, float]:
    times = []
    for query in queries:
        started = time.perf_counter()
        search(query)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def recall(found: list[list[int]], truth: np.ndarray) -> float:
    return float(np.mean([len(set(row) & set(truth_row.tolist())) / K for row, truth_row in zip(found, truth,
                                                                                                strict=True)]))


_LOAD_PROBE = """
import pathlib, sys
import numpy, psutil
sys.path.insert(0, {root!r})
from engine.index import load_index
process = psutil.Process()
before = process.memory_info().rss
index = load_index(pathlib.Path({path!r}))
index.search(numpy.ones({dimension}, "float32"), 10)
print((process.memory_info().rss - before) / 2**20)
"""


def loaded_rss_mib(path: Path) -> float:
    """RSS added by loading the saved index in a fresh process (imports subtracted)."""
    code = _LOAD_PROBE.format(root=str(Path(__file__).resolve().parents[1]), path=str(path), dimension=DIMENSION)
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return float(output.strip().splitlines()[-1])


def measure_ours(name: str, index: Any, build_s: float, queries: np.ndarray, truth: np.ndarray,
                 ids: list[str], folder: Path) -> dict[str, Any]:
    position = {passage_id: row for row, passage_id in enumerate(ids)}
    path = folder / f"{name}.qvi"
    started = time.perf_counter()
    save_index(index, path)
    save_s = time.perf_counter() - started
    result: dict[str, Any] = {"index": name, "build_s": round(build_s, 2), "save_s": round(save_s, 2),
                              "file_mib": round(path.stat().st_size / 2**20, 1),
                              "loaded_rss_mib": round(loaded_rss_mib(path), 1)}
    settings = [None] if isinstance(index, FlatIndex) else list(NPROBES)
    rows = []
    for nprobe in settings:
        if nprobe is not None:
            index.nprobe = nprobe
        found = [[position[pid] for pid, _ in hits] for hits in index.search_batch(queries, K)]
        p50, p95 = latencies_ms(lambda q: index.search(q, K), queries)
        rows.append({"nprobe": nprobe, "recall@10": round(recall(found, truth), 4), "p50_ms": round(p50, 2),
                     "p95_ms": round(p95, 2)})
    if isinstance(index, IVFIndex):
        index.nprobe = IVFIndex.DEFAULT_NPROBE
    result["search"] = rows
    path.unlink()
    return result


def measure_raw(name: str, factory: str, data: np.ndarray, queries: np.ndarray, truth: np.ndarray,
                sweep: tuple[str, tuple[int, ...]] | None) -> dict[str, Any]:
    """A FAISS factory string measured directly (no id mapping), for comparison."""
    started = time.perf_counter()
    index = faiss.index_factory(DIMENSION, factory, faiss.METRIC_INNER_PRODUCT)
    if not index.is_trained:
        sample = data[np.random.default_rng(0).choice(len(data), min(len(data), 131_072), replace=False)]
        index.train(sample)
    index.add(data)
    build_s = time.perf_counter() - started
    rows = []
    for value in (sweep[1] if sweep else (None,)):
        if sweep and value is not None:
            faiss.ParameterSpace().set_index_parameter(index, sweep[0], value)
        _, found = index.search(queries, K)
        p50, p95 = latencies_ms(lambda q: index.search(q.reshape(1, -1), K), queries)
        rows.append({sweep[0] if sweep else "param": value, "recall@10": round(recall(found.tolist(), truth), 4),
                     "p50_ms": round(p50, 2), "p95_ms": round(p95, 2)})
    size = faiss.serialize_index(index).nbytes
    return {"index": f"{name} (raw faiss {factory})", "build_s": round(build_s, 2), "file_mib": round(size / 2**20, 1),
            "search": rows}


def run_size(count: int, query_count: int, folder: Path, hnsw_max: int, with_pq: bool) -> list[dict[str, Any]]:
    centers = np.random.default_rng(1).standard_normal((max(64, count // 500), DIMENSION)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    data = clustered_vectors(count, seed=2, centers=centers)
    queries = clustered_vectors(query_count, seed=3, centers=centers)
    exact = faiss.IndexFlatIP(DIMENSION)
    exact.add(data)
    _, truth = exact.search(queries, K)
    del exact
    ids = [f"doc{row // 40:06d}-{row % 40:04d}" for row in range(count)]
    batches = [(ids[start:start + 10_000], data[start:start + 10_000]) for start in range(0, count, 10_000)]
    results = []
    for kind in (FlatIndex.kind, IVFIndex.kind):
        started = time.perf_counter()
        index = build_index(MODEL_ID, DIMENSION, iter(batches), kind=kind, expected_count=count)
        build_s = time.perf_counter() - started
        results.append(measure_ours(f"{kind}{index.params.get('nlist', '')}", index, build_s, queries, truth, ids,
                                    folder))
        del index
        print(json.dumps(results[-1]), flush=True)
    nlist = IVFIndex.nlist_for(count)
    raw = [("ivf-pq48", f"IVF{nlist},PQ48", ("nprobe", NPROBES))] if with_pq else []
    if count <= hnsw_max:
        raw.append(("hnsw32", "HNSW32,Flat", ("efSearch", (32, 64, 128))))
    for name, factory, sweep in raw:
        results.append(measure_raw(name, factory, data, queries, truth, sweep))
        print(json.dumps(results[-1]), flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--hnsw-max", type=int, default=100_000, help="skip HNSW above this size (slow to build)")
    parser.add_argument("--with-pq", action="store_true",
                        help="also measure IVF-PQ48 (slow to train here; recall@10 was 0.47 at 10k)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    report: dict[str, Any] = {"threads": faiss.omp_get_max_threads(), "dimension": DIMENSION, "sizes": {}}
    with tempfile.TemporaryDirectory() as folder:
        for count in args.sizes:
            print(f"== {count:,} vectors", flush=True)
            report["sizes"][str(count)] = run_size(count, args.queries, Path(folder), args.hnsw_max,
                                                   args.with_pq)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
