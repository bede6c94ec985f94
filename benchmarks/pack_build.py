"""Measure a datastore pack build at ≥100k passages, and extrapolate to all of peS2o.

What is measured and what is not (also printed with the results):

- **Measured at full size** (every passage): import of the JSON lines (parse, cut passages,
  SQLite + FTS5), building the vector index through the product's code (flat adds, then the
  IVF rebuild: training on a sample and adding every vector), packing (``VACUUM INTO``
  snapshot, sha256 of every file, gzip tar) and installing the pack into a fresh home
  (streamed unpack with sha256 checks, database check), plus a search on the installed pack.
- **Measured on a sample**: real embedding with the bundled all-MiniLM-L6-v2 on this CPU
  (``--embed-sample`` passages). Embedding all passages on 2 shared cores would take hours, so
  the other passages get **synthetic vectors** (unit vectors around 256 random centres, written
  to the embedding cache exactly as real ones would be); the index and pack stages do the same
  work with them. Embedding time for the full set is extrapolated from the measured rate.

The corpus is the shared cs-sample (3,529 real papers) replicated with sentence-shuffled copies
(new ids, so every passage is distinct text) until it holds ``--passages`` passages.

Usage::

    python benchmarks/pack_build.py --passages 100000 --workdir /tmp/quire-packbench --json results.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
import re
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from engine.datastore.registry import DATABASE_FILE
from engine.progress import Progress
from engine.service import Engine

SAMPLE = Path(__file__).resolve().parents[1].parent / "shared" / "datastore" / "cs-sample.jsonl.gz"
PES2O_PASSAGES = 236_000_000
PES2O_PAPERS = 45_000_000
NAME = "bench"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def make_corpus(sample: Path, out: Path, target_passages: int, passage_words: int) -> dict[str, Any]:
    """Write enough sentence-shuffled copies of ``sample`` to reach ``target_passages`` (estimated)."""
    with gzip.open(sample, "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines if line.strip()]
    per_copy = sum(max(1, math.ceil(len((r.get("text") or "").split()) / passage_words)) for r in records)
    copies = max(1, math.ceil(target_passages * 1.03 / per_copy))
    started = time.perf_counter()
    with out.open("w", encoding="utf-8") as handle:
        for copy in range(copies):
            shuffle = random.Random(copy)
            for record in records:
                text = record.get("text") or ""
                if copy:
                    sentences = _SENTENCE.split(text)
                    shuffle.shuffle(sentences)
                    text = " ".join(sentences)
                handle.write(json.dumps({**record, "id": f"{record['id']}~{copy}", "text": text}) + "\n")
    return {"records": len(records) * copies, "copies": copies, "estimated_passages": per_copy * copies,
            "bytes": out.stat().st_size, "seconds": time.perf_counter() - started}


class StageClock:
    """Timestamps of progress reports, to split a call into its stages."""

    def __init__(self) -> None:
        self.marks: list[tuple[float, str, int, int, str]] = []

    def __call__(self, progress: Progress) -> None:
        self.marks.append((time.perf_counter(), progress.stage, progress.done, progress.total, progress.label))


def clustered_vectors(count: int, dimension: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    picks = rng.integers(0, len(centres), size=count)
    vectors = centres[picks] + 0.35 * rng.standard_normal((count, dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32)


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "load_average_at_start": os.getloadavg(),
                                           "note": "a 2-core development VM shared with other work"}}
    corpus = work / "corpus.jsonl"
    results["corpus"] = make_corpus(Path(args.sample), corpus, args.passages, 250)
    print(f"corpus: {results['corpus']}", file=sys.stderr)

    with Engine(work / "home-a") as engine:
        started = time.perf_counter()
        report = engine.add_datastore(corpus, NAME, embed=False)
        results["import"] = {"records": report.records_added, "passages": report.passages_added,
                             "words": report.words_added, "seconds": time.perf_counter() - started}
        print(f"import: {results['import']}", file=sys.stderr)
        source = engine.datastore_registry.source(NAME)
        embedder = engine.embedder
        passages = []
        after = 0
        while chunk := source.store.passages_after(after, 20_000):
            after = chunk[-1][0]
            passages.extend(stored for _, stored in chunk)

        # Real embedding on a sample (the product's embedder, batch 32, length-sorted like the pipeline).
        sample = passages[: args.embed_sample]
        texts = [f"{p.title}\n{p.text}" if p.title else p.text for p in sample]
        embedder.embed(texts[:64])  # load the model outside the timing
        started = time.perf_counter()
        real = embedder.embed(texts, batch_size=32)
        embed_seconds = time.perf_counter() - started
        source.cache.put_many(embedder.model_id, [p.content_hash for p in sample], real)
        results["embed_sample"] = {"passages": len(sample), "seconds": embed_seconds,
                                   "passages_per_second": len(sample) / embed_seconds, "model": embedder.model_id}
        print(f"embed sample: {results['embed_sample']}", file=sys.stderr)

        # Synthetic vectors for the rest (the stand-in for embedding; not part of the timed build).
        rng = np.random.default_rng(0)
        centres = rng.standard_normal((256, embedder.dimension)).astype(np.float32)
        started = time.perf_counter()
        rest = passages[args.embed_sample:]
        for start in range(0, len(rest), 20_000):
            block = rest[start:start + 20_000]
            source.cache.put_many(embedder.model_id, [p.content_hash for p in block],
                                  clustered_vectors(len(block), embedder.dimension, rng, centres))
        results["synthetic_vectors"] = {"passages": len(rest), "seconds": time.perf_counter() - started}

        # The index through the product's code path: every vector is cached, so no model runs.
        clock = StageClock()
        started = time.perf_counter()
        source.embed_pending(progress=clock)
        index = source.index()
        results["index"] = {"vectors": len(index), "kind": index.kind, "params": index.params,
                            "seconds": time.perf_counter() - started,
                            "bytes": source.index_path.stat().st_size}
        print(f"index: {results['index']}", file=sys.stderr)

        clock = StageClock()
        started = time.perf_counter()
        pack, manifest = engine.pack_datastore(NAME, work / "packs", progress=clock)
        total = time.perf_counter() - started
        stages = {label: round(clock.marks[i + 1][0] - clock.marks[i][0], 3)
                  for i, (_, _, _, _, label) in enumerate(clock.marks[:-1])}
        results["pack"] = {"seconds": total, "stages": stages, "pack_bytes": pack.stat().st_size,
                           "files": {f.path: f.size for f in manifest.files}}
        print(f"pack: {results['pack']}", file=sys.stderr)

    with Engine(work / "home-b") as engine:
        started = time.perf_counter()
        installed = engine.install_datastore(pack)
        results["install"] = {"seconds": time.perf_counter() - started, "records": installed.record_count,
                              "passages": installed.passage_count}
        started = time.perf_counter()
        hits = engine.search("residual networks for semantic segmentation", k=10, source="datastore",
                             rewrite=False, rerank="none")
        results["search_after_install"] = {"hits": len(hits), "seconds": time.perf_counter() - started}
        print(f"install: {results['install']} search: {results['search_after_install']}", file=sys.stderr)
    results["machine"]["load_average_at_end"] = os.getloadavg()
    results["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    results["extrapolation"] = extrapolate(results)
    return results


def pq_experiment(count: int, dimension: int = 384, queries: int = 200, m: int = 48,
                  real_index: Path | None = None) -> dict[str, Any]:
    """Compressed indexes for peS2o shards (IVF-PQ, ``m`` bytes a vector) against the product's IVF-SQ8 and
    exact search: train/add time, bytes per vector, recall@10. On ``count`` synthetic clustered unit
    vectors, or on the real MiniLM vectors of a saved flat index (``real_index``), queries held out."""
    import faiss

    rng = np.random.default_rng(1)
    if real_index is not None:
        from engine.index.storage import load_index

        flat = load_index(real_index).faiss_index
        inner = faiss.downcast_index(flat.index) if hasattr(flat, "index") else flat  # under the id map
        every = inner.reconstruct_n(0, inner.ntotal).astype(np.float32)
        order = rng.permutation(len(every))
        probes, vectors = every[order[:queries]], every[order[queries:]]
        count = len(vectors)
    else:
        centres = rng.standard_normal((256, dimension)).astype(np.float32)
        vectors = clustered_vectors(count, dimension, rng, centres)
        probes = clustered_vectors(queries, dimension, rng, centres)
    dimension = vectors.shape[1]
    exact = faiss.IndexFlatIP(dimension)
    exact.add(vectors)
    _, truth = exact.search(probes, 10)
    nlist = 2 ** round(math.log2(4 * math.sqrt(count)))
    found: dict[str, Any] = {"vectors": count, "nlist": nlist, "real": real_index is not None}
    for name, factory in (("ivf_sq8", f"IVF{nlist},SQ8"), ("ivf_pq", f"IVF{nlist},PQ{m}")):
        index = faiss.index_factory(dimension, factory, faiss.METRIC_INNER_PRODUCT)
        started = time.perf_counter()
        index.train(vectors[: min(count, 131_072)])
        trained = time.perf_counter() - started
        index.add(vectors)
        added = time.perf_counter() - started - trained
        faiss.extract_index_ivf(index).nprobe = min(64, nlist)
        started = time.perf_counter()
        _, got = index.search(probes, 10)
        per_query_ms = (time.perf_counter() - started) / queries * 1000
        recall = float(np.mean([len(set(got[i]) & set(truth[i])) / 10 for i in range(queries)]))
        size = len(faiss.serialize_index(index))
        found[name] = {"factory": factory, "train_s": trained, "add_s": added, "bytes": size,
                       "bytes_per_vector": size / count, "recall_at_10": recall, "query_ms": per_query_ms}
    return found


def extrapolate(results: dict[str, Any]) -> dict[str, Any]:
    """Per-million-passage figures from this run, scaled to peS2o's ~236M passages on one such machine."""
    passages = results["import"]["passages"]
    per_million = 1_000_000 / passages
    build = {
        "import_s": results["import"]["seconds"] * per_million,
        "embed_s_minilm_this_cpu": 1_000_000 / results["embed_sample"]["passages_per_second"],
        "index_s": results["index"]["seconds"] * per_million,
        "pack_s": results["pack"]["seconds"] * per_million,
        "install_s": results["install"]["seconds"] * per_million,
    }
    sizes = {
        "database_bytes": results["pack"]["files"].get(DATABASE_FILE, 0) * per_million,
        "index_bytes": results["index"]["bytes"] * per_million,
        "pack_bytes": results["pack"]["pack_bytes"] * per_million,
    }
    return {"per_million_passages": build, "sizes_per_million_passages": sizes,
            "pes2o_single_machine_hours": {key: value * PES2O_PASSAGES / 1e6 / 3600 for key, value in build.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--embed-sample", type=int, default=1_000)
    parser.add_argument("--sample", default=str(SAMPLE))
    parser.add_argument("--workdir", default="/tmp/quire-packbench")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--pq-only", type=int, metavar="N", help="only compare IVF-PQ with IVF-SQ8 on N vectors")
    parser.add_argument("--pq-real", metavar="INDEX", help="only compare them on the real vectors of a flat index")
    args = parser.parse_args()
    if args.pq_only or args.pq_real:
        real = Path(args.pq_real) if args.pq_real else None
        results = {"pq_experiment": pq_experiment(args.pq_only or 0, real_index=real)}
    else:
        results = run(args)
    text = json.dumps(results, indent=2, default=str)
    print(text)
    if args.json:
        Path(args.json).write_text(text, encoding="utf-8")
    if not args.keep:
        shutil.rmtree(args.workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
