"""Datastore speed: import (BM25-searchable) of the 3,529-paper sample, embedding, pack and install.

    .venv/bin/python benchmarks/datastore_import.py [--file F] [--embed-sample N] [--embed-all]

Import is measured on the whole file; embedding on the first N passages (default 512) with the
configured embedder (the bundled all-MiniLM-L6-v2 unless settings say otherwise) and
extrapolated, unless --embed-all. Figures go to stdout and benchmarks/results/datastore_import.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.datastore.bundled import bundled_datastore  # noqa: E402
from engine.datastore.source import _passage, local_passage_id  # noqa: E402
from engine.embed import EmbeddingCache, embed_passages  # noqa: E402
from engine.service import Engine  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=None, help="a .jsonl(.gz) file (default: the bundled sample)")
    parser.add_argument("--embed-sample", type=int, default=512)
    parser.add_argument("--embed-all", action="store_true")
    args = parser.parse_args()
    path = args.file or bundled_datastore()
    # The file as the repository names it, so a results file holds no machine's paths.
    shown = path.resolve().relative_to(ROOT) if path.resolve().is_relative_to(ROOT) else Path(path.name)
    results: dict[str, object] = {"file": str(shown), "file_bytes": path.stat().st_size}
    with tempfile.TemporaryDirectory() as work, Engine(home=Path(work) / "home") as engine:
        started = time.perf_counter()
        report = engine.add_datastore(path, "bench", embed=False)
        seconds = time.perf_counter() - started
        source = engine.datastore_registry.source("bench")
        db_bytes = sum(p.stat().st_size for p in source.folder.iterdir() if p.is_file())
        results["import"] = {"records": report.records_added, "passages": report.passages_added,
                             "words": report.words_added, "seconds": round(seconds, 2),
                             "words_per_s": round(report.words_added / seconds),
                             "records_per_s": round(report.records_added / seconds),
                             "database_mib": round(db_bytes / 2**20, 1),
                             "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
        print(f"import: {report.records_added:,} records, {report.passages_added:,} passages, "
              f"{report.words_added:,} words in {seconds:.1f} s ({report.words_added / seconds:,.0f} words/s); "
              f"database {db_bytes / 2**20:.1f} MiB")

        embedder = engine.embedder
        if args.embed_all:
            started = time.perf_counter()
            count = engine.embed_datastore("bench")
        else:
            chunk = source.store.passages_after(0, args.embed_sample)
            passages = [_passage(local_passage_id(p.record_id, p.ordinal), p) for _, p in chunk]
            embedder.embed(["warm up"])  # model load is not throughput
            started = time.perf_counter()
            with EmbeddingCache(Path(work) / "bench-cache.db") as cache:
                embed_passages(embedder, cache, passages)
            count = len(passages)
        seconds = time.perf_counter() - started
        rate = count / seconds
        results["embed"] = {"model": embedder.model_id, "passages": count, "seconds": round(seconds, 2),
                            "passages_per_s": round(rate, 1),
                            "estimated_full_seconds": round(report.passages_added / rate)}
        print(f"embed: {count:,} passages in {seconds:.1f} s ({rate:.1f} passages/s) with {embedder.model_id}; "
              f"all {report.passages_added:,} would take ~{report.passages_added / rate / 60:.1f} min")

        # The pack holds the index only when the datastore was embedded (--embed-all); BM25-only otherwise.
        started = time.perf_counter()
        pack, _ = engine.pack_datastore("bench", Path(work) / "bench.quirepack")
        pack_seconds = time.perf_counter() - started
        with Engine(home=Path(work) / "other") as other:
            started = time.perf_counter()
            other.install_datastore(pack)
            install_seconds = time.perf_counter() - started
        pack_mib = pack.stat().st_size / 2**20
        results["pack"] = {"pack_mib": round(pack_mib, 1), "pack_seconds": round(pack_seconds, 2),
                           "install_seconds": round(install_seconds, 2), "with_index": bool(args.embed_all)}
        print(f"pack: {pack_mib:.1f} MiB in {pack_seconds:.1f} s; install (verify + unpack) {install_seconds:.1f} s")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "datastore_import.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
