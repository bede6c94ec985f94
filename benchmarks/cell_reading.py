"""What a table cell's reading costs and buys with less context around each sentence.

    python benchmarks/reader_data.py                  # once: the questions and their papers' sentences
    python benchmarks/cell_reading.py [--limit N]

A cell of the table of papers reads the hand score's best 8 sentences of its passages (``read_limit``), each
with the sentences around it (up to 300 characters either side, engine.cite.reader.MAX_NEIGHBOUR_CHARS). The
reader's time grows with what it reads, so the neighbours are the cost a cell can cut without reading fewer
sentences. Measured here in one run on COVID-QA's check questions (14 papers never fitted on), each ranked
among its own paper's sentences as the product ranks (reader + hand score at reader.json's weight, the reader
reading the hand score's best 8): answering sentence first / in the top 3, and the reader's milliseconds per
cell (8 sentences, one batch) at each neighbour length. Results: benchmarks/results/cell_reading.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from reader import descending, rank_stats, reader_and_scorer  # noqa: E402
from reader_data import DEFAULT_OUT  # noqa: E402
from train_reader import read_data  # noqa: E402

from engine.cite.reader import reader_text  # noqa: E402
from engine.synthesis.evidence import answer_scores, hand_scores  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "cell_reading.json"
CELL_READ_LIMIT = 8
NEIGHBOUR_CHARS = (300, 150, 60, 0)


def text_with(sentence: str, before: str, after: str, chars: int) -> str:
    """What the reader reads (engine.cite.reader.reader_text) with each neighbour cut to ``chars`` (0: none)."""
    return reader_text(sentence, before.strip()[-chars:], after.strip()[:chars]) if chars else reader_text(sentence)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--limit", type=int, help="at most this many check questions (a quick look)")
    args = parser.parse_args()
    data = read_data(args.data)
    reader, scorer = reader_and_scorer()
    weight = reader.hand_weight
    questions = [q for q in data["questions"] if q["split"] == "check"][:args.limit]
    prepared = []
    for question in questions:
        candidates = data["papers"][question["paper"]]
        hand = hand_scores(question["question"], [c["text"] for c in candidates], scorer)
        prepared.append((question, candidates, hand, descending(hand)[:CELL_READ_LIMIT]))
    results: dict[str, Any] = {}
    for chars in NEIGHBOUR_CHARS:
        orders, cell_ms = [], []
        for question, candidates, hand, chosen in prepared:
            texts = [text_with(candidates[i]["text"], candidates[i]["before"], candidates[i]["after"], chars)
                     for i in chosen]
            started = time.perf_counter()
            logits = reader.model.logits([(question["question"], t) for t in texts])[:, 0]  # uncached: timed
            cell_ms.append(1000 * (time.perf_counter() - started))
            read = np.full(len(hand), -np.inf, dtype=np.float32)
            read[chosen] = logits
            orders.append(descending(answer_scores(read, hand, weight)))
        cell_ms.sort()
        results[f"neighbours_{chars}_chars"] = {
            **rank_stats(orders, [q["also"] for q, *_ in prepared]),
            "cell_ms_p50": round(statistics.median(cell_ms), 1),
            "cell_ms_p95": round(cell_ms[int(0.95 * (len(cell_ms) - 1))], 1)}
        print(chars, json.dumps(results[f"neighbours_{chars}_chars"]), flush=True)
    results.update({"questions": len(prepared), "read_limit": CELL_READ_LIMIT, "hand_weight": weight,
                    "load_average": round(os.getloadavg()[0], 2),
                    "command": "python benchmarks/cell_reading.py"})
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
