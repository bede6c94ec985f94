"""The support scorer on hand-labelled (sentence, passage) pairs: precision and recall of the shipped weight
and thresholds, the weight and threshold refitted on all pairs, and a 5-fold cross-validated fit.

Run as ``python benchmarks/answers.py pairs`` (the scorer's figures sit beside the answers' in
docs/numbers.md); the shipped values are ``engine.tuning.CITATION``'s.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from engine.cite.support import SupportScorer
from engine.embed import SentenceTransformerEmbedder


def measure_pairs(path: Path) -> dict[str, Any]:
    """The shipped scorer's precision and recall on the JSONL pairs at ``path``, and what a refit would choose."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    # fp32, as Engine.support_embedder gives the scorer (QUIRE_BENCH_INT8=1: the int8 search embedder,
    # which measured precision 0.935 / recall 0.878, 5-fold 0.878 / 0.878, against fp32's 0.957 / 0.918).
    scorer = SupportScorer(SentenceTransformerEmbedder(quantize=bool(os.environ.get("QUIRE_BENCH_INT8"))))
    features = [[(m.cosine, m.overlap) for m in scorer.rank(r["sentence"], r["passage"])] for r in rows]
    labels = np.array([r["label"] for r in rows])

    def scores(weight: float, subset: np.ndarray) -> np.ndarray:
        return np.array([max((weight * c + (1 - weight) * o for c, o in features[i]), default=0.0) for i in subset])

    def metrics(predicted: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
        hits = int((predicted & (truth == 1)).sum())
        return hits / max(1, int(predicted.sum())), hits / max(1, int((truth == 1).sum()))

    def fit(subset: np.ndarray) -> tuple[float, float]:
        best = (-1.0, 0.0, 0.0)
        for weight in np.arange(0.0, 1.01, 0.1):
            s = scores(weight, subset)
            for threshold in np.arange(0.3, 0.95, 0.01):
                p, r = metrics(s >= threshold, labels[subset])
                f05 = 1.25 * p * r / (0.25 * p + r) if p + r else 0.0  # precision-weighted: kept citations must be real
                if f05 > best[0]:
                    best = (f05, float(weight), float(threshold))
        return best[1], best[2]

    everything = np.arange(len(rows))
    current = scores(scorer.weight, everything)
    p, r = metrics(current >= scorer.threshold, labels)
    insert_p, insert_r = metrics(current >= scorer.insert_threshold, labels)
    fitted_weight, fitted_threshold = fit(everything)
    folds = np.arange(len(rows)) % 5
    predicted = np.zeros(len(rows), dtype=bool)
    for fold in range(5):
        train, test = everything[folds != fold], everything[folds == fold]
        weight, threshold = fit(train)
        predicted[test] = scores(weight, test) >= threshold
    cv_p, cv_r = metrics(predicted, labels)
    return {"pairs": len(rows), "supported": int(labels.sum()),
            "shipped": {"weight": scorer.weight, "threshold": scorer.threshold, "precision": round(p, 3),
                        "recall": round(r, 3)},
            "insert_threshold": {"threshold": scorer.insert_threshold, "precision": round(insert_p, 3),
                                 "recall": round(insert_r, 3)},
            "refit_all": {"weight": round(fitted_weight, 2), "threshold": round(fitted_threshold, 2)},
            "five_fold_cv": {"precision": round(cv_p, 3), "recall": round(cv_r, 3)}}
