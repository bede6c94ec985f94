"""Which sentences the answer reader reads, and how its score is mixed: does either limit the ranking?

    python benchmarks/reader_data.py          # once
    python benchmarks/experiments/reader_candidates.py [--cache DIR]

The product's reader reads the 32 sentences with the best hand-weighted score and adds 12 x that score to
its own. If the hand score's choice kept answering sentences from the reader, or its weight drowned the
reader's judgement, another choice would rank better. Every sentence of each question's paper is read
once (cached: about 17 minutes on two cores), then these are compared on the same scores:

- which 32 are read: the hand score's best (shipped), BM25's best, the two interleaved, their reciprocal
  rank fusion, or all;
- how many the hand score chooses (16 to 64);
- the hand score's weight (0 to 16), and a BM25 rank feature added beside it.

The six held-out COVID-QA training papers (32 questions) and the check papers (285 questions, never fitted
on) are both reported. Results: benchmarks/results/reader_candidates.json; conclusions in
docs/history/experiments.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from reader import cached, descending, rank_stats, reader_and_scorer, score_questions  # noqa: E402
from reader_data import DEFAULT_OUT  # noqa: E402
from train_reader import dev_papers, read_data  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "reader_candidates.json"
WEIGHTS = (0.0, 2.0, 4.0, 8.0, 12.0, 16.0)


def chosen(row: dict[str, Any], how: str, k: int) -> set[int]:
    """The sentences the reader reads under the rule ``how``."""
    hand, bm25 = descending(row["hand"]), [int(i) for i in row["bm25"]]
    if how == "hand":
        return set(hand[:k])
    if how == "bm25":
        return set(bm25[:k])
    if how == "interleaved":
        picked: list[int] = []
        for pair in zip(hand, bm25, strict=True):
            picked.extend(i for i in pair if i not in picked)
        return set(picked[:k])
    if how == "rrf":
        fused = np.zeros(len(hand))
        for order in (hand, bm25):
            for rank, i in enumerate(order):
                fused[i] += 1.0 / (60 + rank)
        return set(descending(fused)[:k])
    return set(range(len(hand)))


def ranked(rows: list[dict[str, Any]], how: str, k: int, weight: float, bm25_weight: float = 0.0) -> dict[str, float]:
    orders = []
    for row in rows:
        n = len(row["hand"])
        bm25_feature = np.zeros(n)
        for rank, i in enumerate(row["bm25"]):
            bm25_feature[int(i)] = 1.0 / np.log2(rank + 2)
        read = chosen(row, how, k)
        scores = np.array([row["read"][i] + weight * row["hand"][i] + bm25_weight * bm25_feature[i] if i in read
                           else -np.inf for i in range(n)])
        orders.append(descending(scores))
    return rank_stats(orders, [row["question"]["also"] for row in rows])


def report(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "questions": len(rows),
        "bm25_alone": rank_stats([[int(i) for i in r["bm25"]] for r in rows], [r["question"]["also"] for r in rows]),
        "hand_alone": rank_stats([descending(r["hand"]) for r in rows], [r["question"]["also"] for r in rows]),
        "read_32_by": {how: {str(w): ranked(rows, how, 32, w) for w in WEIGHTS}
                       for how in ("hand", "bm25", "interleaved", "rrf", "all")},
        "hand_chooses": {str(k): {str(w): ranked(rows, "hand", k, w) for w in (0.0, 4.0, 8.0, 12.0)}
                         for k in (16, 24, 48, 64)},
        "bm25_feature": {str(w): {str(v): ranked(rows, "hand", 32, w, v) for v in (0.0, 1.0, 2.0, 4.0, 8.0)}
                         for w in (0.0, 4.0, 8.0, 12.0)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--cache", type=Path, help="a folder for the read rows (benchmarks/reader.py --read-all's)")
    args = parser.parse_args()
    data = read_data(args.data)
    reader, scorer = reader_and_scorer()
    held = dev_papers(data["questions"])
    splits = {"held_out_training_papers": [q for q in data["questions"] if q["paper"] in held],
              "check_papers": [q for q in data["questions"] if q["split"] == "check"]}
    names = {"held_out_training_papers": "dev", "check_papers": "check"}
    result: dict[str, Any] = {}
    for split, questions in splits.items():
        path = args.cache / f"{names[split]}-all.pickle" if args.cache else None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        rows = cached(path, lambda questions=questions: score_questions(data, questions, reader, scorer, None))
        result[split] = report(rows)
    result["command"] = "python benchmarks/experiments/reader_candidates.py"
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    for split in splits:
        print(split, json.dumps(result[split]["read_32_by"]["hand"]), json.dumps(result[split]["read_32_by"]["all"]))


if __name__ == "__main__":
    main()
