"""Ingest speed of two checkouts' code in one run: what a change to ingest costs, against raw get_text.

Each round parses the same PDFs with this checkout's engine and with another's (``--other``, a
folder holding an ``engine/`` package, e.g. ``git archive main engine | tar -x -C /tmp/main-code``),
each in a fresh process (``engine.ingest.parse_pdf``: the whole parse, in that process, no store),
and raw PyMuPDF ``page.get_text()`` over the same pages in that process too. The order of the
two alternates from round to round. Reported: pages per CPU-second of each, its ratio to raw
get_text measured in the same process, and the ratio of the two (the median over rounds).
Usage:

    python benchmarks/ingest_compare.py --other /tmp/main-code [--rounds 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "papers"

_CHILD = """
import json, sys, time
import engine
import pymupdf
from engine.ingest import parse_pdf
files = sys.argv[1:]
cpu = time.process_time()
pages = 0
for path in files:
    with pymupdf.open(path) as document:
        for page in document:
            page.get_text()
            pages += 1
raw = time.process_time() - cpu
cpu = time.process_time()
for path in files:
    parse_pdf(path)
ours = time.process_time() - cpu
print(json.dumps({"pages": pages, "raw_cpu": raw, "parse_cpu": ours}))
"""


def measure(code_root: Path, files: list[Path]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(code_root), "ORT_DISABLE_TELEMETRY": "1"}
    done = subprocess.run([sys.executable, "-c", _CHILD, *map(str, files)], capture_output=True, text=True,
                          env=env, check=True, cwd=code_root)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--other", type=Path, required=True, help="a folder holding the other code's engine/")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "ingest_compare.json")
    args = parser.parse_args()
    files = sorted(CORPUS.glob("*.pdf"))
    runs: dict[str, list[dict[str, float]]] = {"this": [], "other": []}
    for index in range(args.rounds):
        order = [("this", ROOT), ("other", args.other)]
        for name, root in order if index % 2 == 0 else order[::-1]:
            runs[name].append(measure(root, files))
    summary: dict[str, object] = {"files": len(files), "pages": runs["this"][0]["pages"], "rounds": args.rounds}
    for name, measured in runs.items():
        summary[name] = {
            "parse_pages_per_cpu_s": round(statistics.median(m["pages"] / m["parse_cpu"] for m in measured), 1),
            "raw_get_text_pages_per_cpu_s": round(statistics.median(m["pages"] / m["raw_cpu"] for m in measured), 1),
            "ratio_to_raw": round(statistics.median(m["raw_cpu"] / m["parse_cpu"] for m in measured), 3)}
    ratios = [other["parse_cpu"] / this["parse_cpu"] for this, other in zip(runs["this"], runs["other"], strict=True)]
    summary["this_speed_over_other"] = round(statistics.median(ratios), 3)
    summary["per_round"] = [round(r, 3) for r in ratios]
    summary["machine"] = {"cpus": os.cpu_count(), "load_average": os.getloadavg()[0]}
    print(json.dumps(summary, indent=1))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
