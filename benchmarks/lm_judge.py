"""The writer as a support judge (Self-RAG's ISSUP: fully / partially / not supported), measured.

    python benchmarks/lm_judge.py --model WRITER.gguf [--per-label 30] [--train 50]

For each pair the writer is asked "Does the passage support the claim? Reply Fully, Partially or
No" and its answer is read from the first token's probabilities (``reply_probabilities``), zero-shot
and with three worked examples (few-shot). The shipped cross-encoder judges the same pairs. A
logistic model over [P(supports), P(refutes) of the cross-encoder, P(Fully), P(Partially) of the
writer] is fitted on training-side held-out pairs (Check-COVID and CLIMATE-FEVER, from
benchmarks/judge_data.py) and all three are compared on HealthVer dev pairs outside the contract
check's 450 (``--per-label`` of each label): ROC AUC Supports vs Refutes and Supports vs the rest.
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

from engine.cite.judge import SupportJudge, default_judge  # noqa: E402
from engine.generate.llama import LlamaModel  # noqa: E402
from engine.process import prepare_process  # noqa: E402
from engine.protocols import ChatMessage  # noqa: E402
from engine.synthesis import prompts  # noqa: E402

REPLIES = ("Fully", "Partially", "No")


def lm_probabilities(lm: LlamaModel, claim: str, passage: str, few_shot: bool) -> list[float]:
    """P(Fully), P(Partially), P(No) as the first word of the writer's reply."""
    examples = prompts.prompt("support_check_examples") if few_shot else ""
    user = prompts.prompt("support_check").format(examples=examples, passage=prompts.inert(passage)[:1500],
                                                  claim=prompts.inert(claim))
    return lm.reply_probabilities([ChatMessage("system", prompts.prompt("support_check_system").strip()),
                                   ChatMessage("user", user.strip())], REPLIES)


def judge_features(judge: SupportJudge, pairs: list[tuple[str, str]]) -> np.ndarray:
    """The cross-encoder's P(supports), P(refutes) of the deciding window, as Quire judges."""
    return np.array([[j.score, j.contradiction] for j in judge.judge_many(pairs, whole=True)])


def fit_logistic(features: np.ndarray, labels: np.ndarray, steps: int = 4000, rate: float = 0.5) -> np.ndarray:
    """Weights (bias last) of a logistic regression, by gradient descent on standardised features."""
    x = np.hstack([features, np.ones((len(features), 1))])
    weights = np.zeros(x.shape[1])
    for _ in range(steps):
        predicted = 1 / (1 + np.exp(-x @ weights))
        weights -= rate * (x.T @ (predicted - labels) / len(labels) + 1e-3 * weights)
    return weights


def score(features: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return np.hstack([features, np.ones((len(features), 1))]) @ weights


def aucs(values: np.ndarray, gold: list[str]) -> dict[str, float]:
    labels = np.array(gold)
    return {"supports_vs_refutes": _auc(values[labels == "Supports"], values[labels == "Refutes"]),
            "supports_vs_rest": _auc(values[labels == "Supports"], values[labels != "Supports"])}


def main() -> None:
    prepare_process()  # as the CLI does: offline hub client, passive OpenMP threads for llama.cpp
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="the writer's GGUF file")
    parser.add_argument("--per-label", type=int, default=30)
    parser.add_argument("--train", type=int, default=50, help="held-out pairs of each training-side source")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/lm_judge.json")
    args = parser.parse_args()
    rng = random.Random(11)
    rows, check_ids = healthver(SHARED)
    test = [r for label in ("Supports", "Refutes", "Neutral")
            for r in rng.sample([r for r in rows if r["label"] == label and r["id"] not in check_ids],
                                args.per_label)]
    held = [r for source in ("checkcovid", "climate-fever")
            for r in rng.sample([r for r in held_out_pairs(DEFAULT_DATA) if r["source"] == source], args.train)]
    judge = default_judge()
    lm = LlamaModel(args.model, context_size=2048, threads=args.threads)
    started = time.perf_counter()
    train_pairs = [(r["claim"], r["evidence"]) for r in held]
    test_pairs = [(r["claim"], r["evidence"]) for r in test]
    train_lm = np.array([lm_probabilities(lm, c, e, False) for c, e in train_pairs])
    test_lm = {shots: np.array([lm_probabilities(lm, c, e, shots == "few-shot") for c, e in test_pairs])
               for shots in ("zero-shot", "few-shot")}
    seconds = time.perf_counter() - started
    train_ce, test_ce = judge_features(judge, train_pairs), judge_features(judge, test_pairs)
    target = np.array([r["label"] == "supports" for r in held], dtype=float)
    weights = fit_logistic(np.hstack([train_ce, train_lm[:, :2]]), target)
    gold = [r["label"] for r in test]
    report: dict[str, Any] = {
        "model": Path(args.model).name, "healthver_pairs": len(test), "training_side_pairs": len(held),
        "lm_seconds_per_pair": round(seconds / (len(train_pairs) + 2 * len(test_pairs)), 2),
        "cross_encoder": aucs(test_ce[:, 0] - test_ce[:, 1], gold),
        "lm_zero_shot": aucs(test_lm["zero-shot"][:, 0] + 0.5 * test_lm["zero-shot"][:, 1], gold),
        "lm_few_shot": aucs(test_lm["few-shot"][:, 0] + 0.5 * test_lm["few-shot"][:, 1], gold),
        "combined_zero_shot": aucs(score(np.hstack([test_ce, test_lm["zero-shot"][:, :2]]), weights), gold),
        "combined_weights": [round(float(w), 3) for w in weights],
        "training_side_auc": {"cross_encoder": _auc((train_ce[:, 0] - train_ce[:, 1])[target == 1],
                                                    (train_ce[:, 0] - train_ce[:, 1])[target == 0]),
                              "lm_zero_shot": _auc((train_lm[:, 0] + 0.5 * train_lm[:, 1])[target == 1],
                                                   (train_lm[:, 0] + 0.5 * train_lm[:, 1])[target == 0])},
    }
    print(json.dumps(report, indent=2))
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
