"""Ingest throughput: Quire's parse + chunk + store against raw PyMuPDF text extraction.

Both run on the same files in the same process, alternating, several rounds; the median of
each is reported. No embedding is involved. Quire's ingest is measured as shipped (parsing in
worker processes while this one stores) and with parsing in the storing process
(QUIRE_PARSE_WORKERS=0), which shows what one core gives. Usage:

    python benchmarks/ingest.py [PDF_OR_FOLDER ...] [--rounds N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.importer import discover_pdfs
from engine.service import Engine

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "papers"


def raw_pages_per_second(files: list[Path]) -> tuple[float, int]:
    """Open each PDF and call page.get_text() on every page: the floor any ingest pays."""
    pages = 0
    started = time.perf_counter()
    for path in files:
        with pymupdf.open(path) as document:
            for page in document:
                page.get_text("text")
                pages += 1
    return pages / (time.perf_counter() - started), pages


def ingest_pages_per_second(files: list[Path], workers: int | None = None) -> tuple[float, int, int]:
    """Full ingest into a fresh library: hash, parse, chunk, write passages, rects and FTS."""
    if workers is None:
        os.environ.pop("QUIRE_PARSE_WORKERS", None)
    else:
        os.environ["QUIRE_PARSE_WORKERS"] = str(workers)
    with tempfile.TemporaryDirectory() as home, Engine(home) as engine:
        started = time.perf_counter()
        results = list(engine.add_documents(files))
        elapsed = time.perf_counter() - started
        pages = sum(r.pages for r in results)
        passages = sum(r.passages for r in results)
    return pages / elapsed, pages, passages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", default=[str(DEFAULT_CORPUS)])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    files = discover_pdfs(args.paths)
    raw_rates, ingest_rates, single_rates = [], [], []
    pages = passages = 0
    ingest_pages_per_second(files[:1])  # start the parse workers' fork server once, as an app would
    for _ in range(args.rounds):
        rate, pages = raw_pages_per_second(files)
        raw_rates.append(rate)
        rate, _, passages = ingest_pages_per_second(files)
        ingest_rates.append(rate)
        single_rates.append(ingest_pages_per_second(files, workers=0)[0])
    os.environ.pop("QUIRE_PARSE_WORKERS", None)
    raw, ours = statistics.median(raw_rates), statistics.median(ingest_rates)
    single = statistics.median(single_rates)
    figures = {"files": len(files), "pages": pages, "passages": passages, "rounds": args.rounds,
               "raw_get_text_pages_per_s": round(raw, 1), "ingest_pages_per_s": round(ours, 1),
               "ingest_vs_raw": round(ours / raw, 3), "ingest_one_process_pages_per_s": round(single, 1),
               "ingest_one_process_vs_raw": round(single / raw, 3), "target_ratio": 0.5,
               "cpus": os.cpu_count(), "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}
    print(f"{len(files)} PDFs, {pages} pages, {passages} passages, median of {args.rounds} rounds")
    print(f"raw PyMuPDF get_text : {raw:7.1f} pages/s")
    print(f"Quire ingest          : {ours:7.1f} pages/s  (parse + chunk + store, no embedding)")
    print(f"ratio                 : {ours / raw:7.2f}  (target >= 0.50)")
    print(f"one process           : {single:7.1f} pages/s  (QUIRE_PARSE_WORKERS=0), ratio {single / raw:.2f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
