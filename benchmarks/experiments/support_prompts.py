"""Does the writer read support better when asked another way? Three prompts for the second reader, compared.

The second reader (engine/synthesis/support_reader.py) asks the 1.5B writer "Does the passage support the
claim? Reply Fully, Partially or No" with three worked examples and scores P(Fully) + 1/2 P(Partially). On the
contract check's HealthVer pairs that reaches Supports 0.42 judged supported against a target of 0.50. Is the
wording the limit, or the model? Each prompt below reads the same pairs, the ones the reader could be handed:
the judge did not support them and no number, "not" or direction check vetoed them (an added clause or a list
item the passage lacks included, since a better reader might find those stated after all).

- ``fully``: the shipped prompt (score P(Fully) + 1/2 P(Partially); P(Fully) and 1 - P(No) also reported);
- ``yes``: "Does the passage state or clearly imply the claim? Reply Yes or No", the same three examples;
- ``nli``: "Does the passage support the claim, refute it, or neither?" (score P(Supports), and
  P(Supports) - P(Refutes)), the same examples.

Pairs: training-side held-out pairs of Check-COVID, CLIMATE-FEVER and PubMedQA FactCC-style (benchmarks/lm_judge.py's
fitting population; up to ``--fit`` of each label) and HealthVer dev pairs outside the contract check's 450
(``--per-label`` of each label). Reported: ROC AUC of each score, supports against the rest and against refutes;
the mean of two prompts' scores too. Every probability is kept. Each prompt reads every pair before the next
prompt starts, so llama.cpp's prefix cache keeps the examples.

    python benchmarks/experiments/support_prompts.py --model WRITER.gguf [--fit 60] [--per-label 90]
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
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from lm_judge import FIT_SOURCES  # noqa: E402
from verify import DEFAULT_DATA, SHARED, _auc, healthver, held_out_pairs  # noqa: E402

from engine.cite.checks import check  # noqa: E402
from engine.cite.judge import default_judge  # noqa: E402
from engine.generate.llama import LlamaModel  # noqa: E402
from engine.process import prepare_process  # noqa: E402
from engine.protocols import ChatMessage  # noqa: E402
from engine.synthesis import prompts, support_reader  # noqa: E402
from engine.synthesis.support_reader import MAX_PASSAGE_CHARS  # noqa: E402

EXAMPLE = "Treatment with drug X reduced viral load by 40% compared with placebo in 120 patients."
EXAMPLE_CLAIMS = ("Drug X lowered viral load.", "Drug X lowered viral load and shortened hospital stays.",
                  "Drug X had no effect on viral load.")
# name -> (question, replies, the replies of the three examples)
PROMPTS = {
    "fully": ("Does the passage support the claim? Reply Fully, Partially or No.",
              ("Fully", "Partially", "No"), ("Fully", "Partially", "No")),
    "yes": ("Does the passage state or clearly imply the claim? Reply Yes or No.", ("Yes", "No"), ("Yes", "No", "No")),
    "nli": ("Does the passage support the claim, refute it, or neither? Reply Supports, Refutes or Neither.",
            ("Supports", "Refutes", "Neither"), ("Supports", "Neither", "Refutes")),
}
SCORES = {  # prompt -> score name -> the score from the replies' probabilities
    "fully": {"fully+partially/2": lambda p: p[0] + 0.5 * p[1], "fully": lambda p: p[0], "1-no": lambda p: 1 - p[2]},
    "yes": {"yes": lambda p: p[0]},
    "nli": {"supports": lambda p: p[0], "supports-refutes": lambda p: p[0] - p[1]},
}
VETOES = ("number", "negation", "direction")  # checks whose verdict stands whoever reads


def messages(name: str, claim: str, passage: str) -> list[ChatMessage]:
    if name == "fully":  # what ships, from its prompt files (the other two are written as it is)
        return support_reader.messages(claim, passage)
    question, _, answers = PROMPTS[name]
    examples = "".join(f'Passage: "{EXAMPLE}"\n\nClaim: "{c}"\n\n{question}\n{a}\n\n'
                       for c, a in zip(EXAMPLE_CLAIMS, answers, strict=True))
    user = (f'{examples}Passage: "{prompts.inert(passage)[:MAX_PASSAGE_CHARS]}"\n\n'
            f'Claim: "{prompts.inert(claim)}"\n\n{question}')
    return [ChatMessage("system", prompts.prompt("support_check_system").strip()), ChatMessage("user", user)]


def readable_pairs(fit_per_label: int, per_label: int) -> list[dict[str, Any]]:
    """Pairs the judge does not support and no veto check blocks, from both populations (seeded)."""
    rng = random.Random(11)
    pool = held_out_pairs(DEFAULT_DATA)
    fit = [dict(r, side="fit", positive=r["label"] == "supports") for source in FIT_SOURCES
           for label in ("supports", "refutes", "neutral")
           for c in [[r for r in pool if r["source"] == source and r["label"] == label]] for r in c]
    rows, check_ids = healthver(SHARED)
    other = [{"claim": r["claim"], "evidence": r["evidence"], "label": r["label"], "source": "healthver",
              "side": "healthver", "positive": r["label"] == "Supports"} for r in rows if r["id"] not in check_ids]
    judge = default_judge()
    chosen = []
    for candidates, take in ((fit, fit_per_label), (other, per_label)):
        rng.shuffle(candidates)
        counts: dict[str, int] = {}
        for row in candidates:
            if counts.get(row["label"], 0) >= take:
                continue
            if judge.judge(row["claim"], row["evidence"]).verdict == "supported":
                continue
            problem = check(row["claim"], row["evidence"])
            if problem is not None and problem.kind in VETOES:
                continue
            row["check"] = problem.kind if problem else ""
            counts[row["label"]] = counts.get(row["label"], 0) + 1
            chosen.append(row)
    return chosen


def report(pairs: list[dict[str, Any]], probs: dict[str, list[list[float]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for side in ("fit", "healthver"):
        index = [i for i, p in enumerate(pairs) if p["side"] == side]
        positive = np.array([pairs[i]["positive"] for i in index])
        refutes = np.array([pairs[i]["label"].lower() == "refutes" for i in index])
        side_out: dict[str, Any] = {"pairs": len(index), "supports": int(positive.sum())}
        named: dict[str, np.ndarray] = {}
        for name, scores in SCORES.items():
            for score_name, score in scores.items():
                values = np.array([score(probs[name][i]) for i in index])
                named[f"{name}: {score_name}"] = values
        named["mean of fully and yes"] = (named["fully: fully+partially/2"] + named["yes: yes"]) / 2
        for key, values in named.items():
            side_out[key] = {"auc_supports_vs_rest": _auc(values[positive], values[~positive]),
                             "auc_supports_vs_refutes": _auc(values[positive], values[refutes])}
        out[side] = side_out
    return out


def main() -> None:
    prepare_process()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="the writer's GGUF file")
    parser.add_argument("--fit", type=int, default=60, help="training-side pairs of each label")
    parser.add_argument("--per-label", type=int, default=90, help="HealthVer pairs outside the check, each label")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/support_prompts.json")
    args = parser.parse_args()
    pairs = readable_pairs(args.fit, args.per_label)
    lm = LlamaModel(args.model, context_size=2048, threads=args.threads)
    probs: dict[str, list[list[float]]] = {}
    seconds: dict[str, float] = {}
    for name, (_, replies, _) in PROMPTS.items():
        started = time.perf_counter()
        probs[name] = [[round(p, 4) for p in lm.reply_probabilities(messages(name, r["claim"], r["evidence"]), replies)]
                       for r in pairs]
        seconds[name] = round((time.perf_counter() - started) / max(1, len(pairs)), 2)
        print(name, seconds[name], "s a pair", flush=True)
    result = {"command": "python benchmarks/experiments/support_prompts.py --model WRITER.gguf",
              "model": Path(args.model).name, "seconds_per_pair": seconds, "auc": report(pairs, probs),
              "pairs": [{"side": p["side"], "source": p["source"], "label": p["label"], "check": p["check"],
                         **{name: probs[name][i] for name in PROMPTS}} for i, p in enumerate(pairs)]}
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result["auc"], indent=1))


if __name__ == "__main__":
    main()
