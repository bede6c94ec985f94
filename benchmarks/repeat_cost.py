"""What a second table over the same papers costs, with and without remembered sentence vectors.

    python benchmarks/repeat_cost.py --home HOME [--question Q]...

A researcher builds a table, then another over the same library (other words, other columns), then
the first again. Each answer and table starts a new support scorer, so before the support embedder
remembered its vectors (engine/embed/remembering.py) every sentence was embedded anew each time. In
one process, the same sequence of tables is built by an engine whose support embedder forgets
("forgets": the embedder unwrapped) and one that remembers; the answer reader's process-wide cache
is emptied before each sequence so that both start cold. Reported: seconds per table, the ratio,
and whether every cell of every table is the same both ways (remembering must change nothing but
time). Results: benchmarks/results/repeat_cost.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.cite.reader import default_reader  # noqa: E402
from engine.embed.remembering import RememberingEmbedder  # noqa: E402
from engine.service import Engine  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "repeat_cost.json"
QUESTIONS = ("What organism or cell type was studied?", "How is the model trained, and on what data?",
             "What organism or cell type was studied?")


def tables(home: Path, questions: list[str], remember: bool) -> tuple[list[float], list[Any]]:
    """Seconds and cells of each table, in order, built by one engine."""
    default_reader()._cache.clear()
    seconds, cells = [], []
    with Engine(home) as engine:
        support = engine.support_embedder
        if not remember:
            assert isinstance(support, RememberingEmbedder)
            engine.__dict__["support_embedder"] = support.embedder
        for question in questions:
            started = time.perf_counter()
            table = engine.table(question, mode="quotes")
            seconds.append(round(time.perf_counter() - started, 2))
            cells.append([[(row.doc_id, cell.text) for cell in row.cells] for row in table.rows])
            print(json.dumps({"remember": remember, "question": question, "seconds": seconds[-1],
                              "rows": len(table.rows)}), flush=True)
    return seconds, cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True, help="a library home (e.g. ../shared/checks/fulltext's)")
    parser.add_argument("--question", action="append", help="the tables' questions, in order (repeatable)")
    args = parser.parse_args()
    questions = args.question or list(QUESTIONS)
    forgetting, forgot_cells = tables(args.home, questions, remember=False)
    remembering, remembered_cells = tables(args.home, questions, remember=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    result = {"commit": commit, "load_average": round(os.getloadavg()[0], 2), "home": str(args.home),
              "tables": [{"question": q, "seconds_forgetting": f, "seconds_remembering": r,
                          "ratio": round(r / f, 3) if f else None}
                         for q, f, r in zip(questions, forgetting, remembering, strict=True)],
              "total_ratio": round(sum(remembering) / sum(forgetting), 3),
              "same_cells": forgot_cells == remembered_cells}
    print(json.dumps(result, indent=1))
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
