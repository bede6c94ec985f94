"""On the GPU machine: judge each run's kept weights on the held-out pairs and on HealthVer (the model
alone, whole evidence), choose one by the rule fixed before the run, and pack its weights as fp16
chunks under 16 MiB (what the device tool sends back).

    HEALTHVER=healthver_dev.csv python3 eval_runs.py OUT BASE DATA RUN_FOLDER...
"""
import csv
import json
import os
import sys
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from train_judge import held_out_report, load_model, load_weights, probabilities, read_pairs, tokenize

# The shipped judge's sources: the chosen run must be as good on these, whatever it adds.
ORIGINAL = ("checkcovid", "climate-fever", "fever", "snli", "synthetic-datastore", "synthetic-pubmedqa", "vitaminc")
RULE = ("held-out mean over the 7 original sources within 0.01 of the best, "
        "then the best HealthVer Supports-vs-Refutes AUC on the 1,467 pairs outside the check")


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(wins / (len(pos) * len(neg)))


def healthver_report(supports: np.ndarray, gold: np.ndarray, inside: np.ndarray) -> dict:
    report = {}
    for name, keep in (("all", np.ones(len(gold), bool)), ("check_450", inside), ("other_1467", ~inside)):
        s, g = supports[keep], gold[keep]
        report[name] = {"s_vs_r": round(auc(s[g == "Supports"], s[g == "Refutes"]), 4),
                        "s_vs_rest": round(auc(s[g == "Supports"], s[g != "Supports"]), 4),
                        "supported_at_0.6": {label: round(float((s[g == label] >= 0.6).mean()), 3)
                                             for label in ("Supports", "Refutes", "Neutral")}}
    return report


def pack(weights: Path, out: Path) -> int:
    items = []
    for key, value in sorted(load_file(str(weights)).items()):
        value = value.half().contiguous()
        if value.numel() * 2 > 10 * 2**20:  # the word embeddings: three row blocks
            rows = value.shape[0] // 3 + 1
            items += [(f"{key}@{j}", value[j * rows:(j + 1) * rows].contiguous()) for j in range(3)]
        else:
            items.append((key, value))
    chunks: list[dict] = [{}]
    size = 0
    for key, value in items:
        if size + value.numel() * 2 > 14 * 2**20 and chunks[-1]:
            chunks.append({})
            size = 0
        chunks[-1][key] = value
        size += value.numel() * 2
    for index, chunk in enumerate(chunks):
        save_file(chunk, str(out / f"weights-{index}.safetensors"))
    return len(chunks)


def main() -> None:
    out, base, data = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    runs = [Path(p) for p in sys.argv[4:]]
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with open(os.environ["HEALTHVER"], encoding="utf-8") as file:
        rows = sorted(csv.DictReader(file), key=lambda r: int(r["id"]))
    check = {r["id"] for label in ("Supports", "Refutes", "Neutral")
             for r in [r for r in rows if r["label"] == label][:150]}
    held = [r for r in read_pairs(data) if r["held_out"]]
    if os.environ.get("SMOKE"):  # a quick try of the whole script on a CPU
        held, rows = held[::100], rows[::20]
    gold = np.array([r["label"] for r in rows])
    inside = np.array([r["id"] in check for r in rows])
    results = {}
    for run in runs:
        if not (run / "best.safetensors").is_file():
            print("no weights for", run)
            continue
        model, tokenizer = load_model(base)
        load_weights(model, [run / "best.safetensors"])
        model.to(device)
        sep = tokenizer.sep_token_id
        report = held_out_report(probabilities(model, tokenize(tokenizer, held, 160), sep, device), held)
        mean7 = float(np.mean([report[s]["accuracy"] for s in ORIGINAL if s in report]))
        pairs = [{"claim": r["claim"], "evidence": r["evidence"]} for r in rows]
        hv = probabilities(model, tokenize(tokenizer, pairs, 160), sep, device)
        results[run.name] = {"held_out": report, "mean7": round(mean7, 4),
                             "healthver": healthver_report(hv[:, 0], gold, inside),
                             "healthver_probs": [[round(float(x), 4) for x in p] for p in hv]}
        print(run.name, "mean7", round(mean7, 4), json.dumps(results[run.name]["healthver"]), flush=True)
    best7 = max(r["mean7"] for r in results.values())
    eligible = [k for k, r in results.items() if r["mean7"] >= best7 - 0.01]
    chosen = max(eligible, key=lambda k: results[k]["healthver"]["other_1467"]["s_vs_r"])
    print("chosen", chosen, "eligible", eligible)
    (out / "eval.json").write_text(json.dumps({"chosen": chosen, "rule": RULE, "runs": results}))
    chosen_run = next(run for run in runs if run.name == chosen)
    print("packed", pack(chosen_run / "best.safetensors", out), "chunks of", chosen)


if __name__ == "__main__":
    main()
