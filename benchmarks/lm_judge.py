"""The writer as a second reader of unsupported sentences (engine/synthesis/support_reader.py), fitted and measured.

    python benchmarks/lm_judge.py --model WRITER.gguf [--per-label 30] [--train 60]
    python benchmarks/lm_judge.py --rescore     (the cascade at the shipped threshold, from the kept scores)

Two populations, never mixed:

- **Fitting** (training side): held-out pairs of Check-COVID, CLIMATE-FEVER and the PubMedQA FactCC-style
  pairs (benchmarks/judge_data.py, ``--train`` of each label of each) that the judge would hand the reader
  (``engine.cite.judge.revisable``) — the only pairs the reader ever sees. The reader's threshold is the
  lowest score at which 90 % of the pairs it accepts are labelled "supports" (printed as
  ``threshold_for_90pc_precision``; the shipped value is ``support_reader.SUPPORTED``).
- **Testing**: HealthVer dev pairs outside the contract check's 450 (``--per-label`` of each label).
  Reported: ROC AUC of the cross-encoder, and the share of each label judged supported by the cross-encoder
  alone and by the cascade (the judge, then the reader on what the judge hands it), at the shipped
  threshold and at others. Every score is kept in the results file.

Writes benchmarks/results/lm_judge.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from verify import DEFAULT_DATA, SHARED, _auc, healthver, held_out_pairs  # noqa: E402

from engine.cite.judge import Judgement, default_judge, revisable  # noqa: E402
from engine.generate.llama import LlamaModel  # noqa: E402
from engine.process import prepare_process  # noqa: E402
from engine.synthesis.support_reader import SUPPORTED, support_score  # noqa: E402

PRECISION_TARGET = 0.9
# The scientific training-side sources: news and climate claims against abstracts, and FactCC-style pairs
# from PubMedQA's training-side abstracts (benchmarks/judge_data.py).
FIT_SOURCES = ("checkcovid", "climate-fever", "synthetic-pubmedqa")


def readable(claim: str, evidence: str, judgement: Judgement) -> bool:
    """Whether the reader would be asked about this pair in an answer (engine/cite/verify.py:_second_look)."""
    return revisable(claim, evidence, judgement)


def fit_threshold(scores: list[float], positive: list[bool], target: float = PRECISION_TARGET) -> float | None:
    """The lowest score at which the pairs scoring at least that are ``target`` labelled positive."""
    for candidate in sorted(set(scores)):
        chosen = [p for s, p in zip(scores, positive, strict=True) if s >= candidate]
        if len(chosen) >= 5 and sum(chosen) / len(chosen) >= target:
            return round(candidate, 3)
    return None


def operating_point(scores: list[float], pairs: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """Precision and recall of "supports" among the fitting pairs the reader accepts at ``threshold``."""
    accepted = [r["label"] == "supports" for r, s in zip(pairs, scores, strict=True) if s >= threshold]
    positives = sum(r["label"] == "supports" for r in pairs)
    return {"accepted": len(accepted), "precision": round(sum(accepted) / len(accepted), 3) if accepted else None,
            "recall": round(sum(accepted) / positives, 3) if positives else None}


def rescore(path: Path, threshold: float) -> None:
    """Recompute the HealthVer cascade at ``threshold`` from a results file's kept scores (no model needed):
    the reader only ever reads pairs the judge did not support, so the two shares add up."""
    report = json.loads(path.read_text(encoding="utf-8"))
    per_label = report["healthver"]["pairs"] // 3
    alone = report["healthver"]["judged_supported_cross_encoder"]
    report["healthver"]["judged_supported_cascade"] = {
        label: round(alone[label] + sum(1 for gold, score in report["healthver_scores"]
                                        if gold == label and score >= threshold) / per_label, 3)
        for label in ("Supports", "Refutes", "Neutral")}
    report["fit"]["shipped_threshold"] = threshold
    report["fit_at_shipped_threshold"] = operating_point(
        [score for _, _, score in report["fit_scores"]], [{"label": label} for _, label, _ in report["fit_scores"]],
        threshold)
    print(json.dumps({k: v for k, v in report.items() if not k.endswith("_scores")}, indent=2))
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def main() -> None:
    prepare_process()  # as the CLI does: offline hub client, passive OpenMP threads for llama.cpp
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="the writer's GGUF file")
    parser.add_argument("--rescore", action="store_true",
                        help="recompute the cascade at the shipped threshold from the results file's scores")
    parser.add_argument("--per-label", type=int, default=30)
    parser.add_argument("--train", type=int, default=60, help="held-out pairs of each label of each fitting source")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/lm_judge.json")
    args = parser.parse_args()
    if args.rescore:
        rescore(args.out, SUPPORTED)
        return
    if not args.model:
        parser.error("--model is required (the writer's GGUF file)")
    rng = random.Random(11)
    rows, check_ids = healthver(SHARED)
    test = [r for label in ("Supports", "Refutes", "Neutral")
            for r in rng.sample([r for r in rows if r["label"] == label and r["id"] not in check_ids],
                                args.per_label)]
    pool = held_out_pairs(DEFAULT_DATA)
    held = [r for source in FIT_SOURCES for label in ("supports", "refutes", "neutral")
            for candidates in [[r for r in pool if r["source"] == source and r["label"] == label]]
            for r in rng.sample(candidates, min(args.train, len(candidates)))]
    judge = default_judge()
    lm = LlamaModel(args.model, context_size=2048, threads=args.threads)

    fit_pairs = [r for r, j in zip(held, judge.judge_many([(r["claim"], r["evidence"]) for r in held], whole=True),
                                   strict=True) if readable(r["claim"], r["evidence"], j)]
    started = time.perf_counter()
    fit_scores = [support_score(lm, r["claim"], r["evidence"]) for r in fit_pairs]
    fit_seconds = time.perf_counter() - started
    fitted = fit_threshold(fit_scores, [r["label"] == "supports" for r in fit_pairs])

    judged = judge.judge_many([(r["claim"], r["evidence"]) for r in test], whole=True)
    asked = np.array([readable(r["claim"], r["evidence"], j) for r, j in zip(test, judged, strict=True)])
    started = time.perf_counter()  # the reader reads only what it would read in an answer
    lm_scores = np.array([support_score(lm, r["claim"], r["evidence"]) if ask else 0.0
                          for r, ask in zip(test, asked, strict=True)])
    test_seconds = time.perf_counter() - started
    gold = np.array([r["label"] for r in test])
    ce_scores = np.array([j.score - j.contradiction for j in judged])
    ce_supported = np.array([j.verdict == "supported" for j in judged])

    def aucs(values: np.ndarray) -> dict[str, float]:
        return {"supports_vs_refutes": _auc(values[gold == "Supports"], values[gold == "Refutes"]),
                "supports_vs_rest": _auc(values[gold == "Supports"], values[gold != "Supports"])}

    def rates(supported: np.ndarray) -> dict[str, float]:
        return {label: round(float(supported[gold == label].mean()), 3) for label in ("Supports", "Refutes", "Neutral")}

    report: dict[str, Any] = {
        "model": Path(args.model).name,
        "command": "python benchmarks/lm_judge.py --model WRITER.gguf",
        "fit": {"pairs": len(held), "asked": len(fit_pairs),
                "supports_among_asked": sum(r["label"] == "supports" for r in fit_pairs),
                "threshold_for_90pc_precision": fitted, "shipped_threshold": SUPPORTED,
                "auc_supports_vs_rest": _auc([s for s, r in zip(fit_scores, fit_pairs, strict=True)
                                              if r["label"] == "supports"],
                                             [s for s, r in zip(fit_scores, fit_pairs, strict=True)
                                              if r["label"] != "supports"])},
        "healthver": {
            "pairs": len(test), "outside_the_check_450": True,
            "auc_cross_encoder": aucs(ce_scores),
            "judged_supported_cross_encoder": rates(ce_supported),
            "judged_supported_cascade": rates(ce_supported | (asked & (lm_scores >= SUPPORTED))),
            "cascade_by_threshold": {str(t): rates(ce_supported | (asked & (lm_scores >= t)))
                                     for t in (0.2, 0.25, 0.3, 0.4, 0.5)},
            "asked_share": round(float(asked.mean()), 3),
        },
        "fit_by_threshold": {str(t): operating_point(fit_scores, fit_pairs, t) for t in (0.2, 0.25, 0.3, 0.4, 0.5)},
        "seconds_per_read": round((fit_seconds + test_seconds) / max(1, len(fit_pairs) + int(asked.sum())), 2),
        "fit_scores": [[r["source"], r["label"], round(x, 3)] for r, x in zip(fit_pairs, fit_scores, strict=True)],
        "healthver_scores": [[r["label"], round(float(x), 3)] for r, x, a in zip(test, lm_scores, asked, strict=True)
                             if a],
    }
    print(json.dumps(report, indent=2))
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
