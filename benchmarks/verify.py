"""Citation verification measured: the shipped support judge beside the one it replaced, in one run.

    python benchmarks/verify.py [--out benchmarks/results/verify.json] [--limit N] [--old REV|none]
    python benchmarks/verify.py --fit [--model-dir resources/models/judge]
    python benchmarks/verify.py --old none --compare DIR   # a retrained judge beside the shipped one, in one run

For each judge (the shipped one; the one shipped at git revision ``--old``, as it ran then,
behind the similarity gate), the report (``--out``) gives:

- the model alone: accuracy at argmax on the 5 % of each training source held out by
  benchmarks/judge_data.py, and ROC AUC of P(supports) on HealthVer dev (Supports vs Refutes,
  Supports vs the rest; all 1,917 pairs, the contract check's 450 and the other 1,467);
- the judge as Quire runs it (windows, checks, thresholds): on HealthVer dev the confusion matrix
  (gold label x verdict), the share of each label judged ``supported`` and balanced accuracy
  (supported = Supports, contradicted = Refutes, unsupported/partial = Neutral); the perturbation
  suite built from the corpus PDFs' own passages (true sentences; "not" inserted; a number
  changed; a direction word flipped; a clause from another paper appended); ScholarQA-Multi's
  expert answer sentences against the snippets they cite and the other snippets of their question
  (share judged supported, ROC AUC); verdicts per second;
- precision and recall of "supported" on the 90 hand-labelled corpus pairs (beside the old
  similarity scorer), and the time to verify a 10-sentence answer against 8 passages.

``--fit`` chooses the judge's two thresholds on the held-out training-side pairs only and writes
them into the model's judge.json. HealthVer, ScholarQA-Multi and the corpus are never used for
fitting. The results file records the machine: its CPUs and load average at the start and the end.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from judge_data import DEFAULT_OUT as DEFAULT_DATA  # noqa: E402
from judge_pairs import (  # noqa: E402
    NEUTRAL,
    REFUTES,
    SUPPORTS,
    Pair,
    documents_sentences,
    make_pairs,
)
from train_judge import held_out_report  # noqa: E402

from engine.cite.judge import PairModel, SupportJudge, default_judge_folder  # noqa: E402
from engine.cite.support import SupportScorer  # noqa: E402
from engine.errors import EngineError  # noqa: E402
from engine.process import prepare_process  # noqa: E402

SHARED = ROOT.parent / "shared"
GOLD = ("Supports", "Refutes", "Neutral")
PRECISION_TARGET = 0.9  # held-out share of "supported" verdicts that are right, which fixes the threshold
OLD_JUDGE = "bfe3cab"  # the last commit with the judge trained on 2,400 pairs, four layers frozen
VERDICT_CLASS = {"supported": "Supports", "contradicted": "Refutes", "partial": "Neutral", "unsupported": "Neutral"}


def healthver(shared: Path) -> tuple[list[dict[str, str]], set[str]]:
    """All HealthVer dev rows, and the ids of the contract check's 450 (first 150 a label by id)."""
    rows = sorted(csv.DictReader((shared / "eval/healthver/healthver_dev.csv").open(encoding="utf-8")),
                  key=lambda r: int(r["id"]))
    check_ids = {r["id"] for label in GOLD for r in [r for r in rows if r["label"] == label][:150]}
    return rows, check_ids


def label_report(gold: list[str], verdicts: list[str]) -> dict[str, Any]:
    """Confusion matrix, share judged supported per label, balanced accuracy (3 classes)."""
    matrix = {g: dict(Counter(v for gg, v in zip(gold, verdicts, strict=True) if gg == g)) for g in GOLD}
    supported = {g: round(matrix[g].get("supported", 0) / max(1, sum(matrix[g].values())), 3) for g in GOLD}
    recalls = [sum(1 for gg, v in zip(gold, verdicts, strict=True) if gg == g and VERDICT_CLASS[v] == g)
               / max(1, gold.count(g)) for g in GOLD]
    return {"pairs": len(gold), "confusion": matrix, "judged_supported": supported,
            "balanced_accuracy": round(float(np.mean(recalls)), 3)}


def judge_healthver(judge: SupportJudge, rows: list[dict[str, str]], check_ids: set[str]) -> dict[str, Any]:
    started = time.perf_counter()
    verdicts = [j.verdict for j in judge.judge_many([(r["claim"], r["evidence"]) for r in rows], whole=True)]
    seconds = time.perf_counter() - started
    return _split_report(rows, check_ids, verdicts, seconds)


def _split_report(rows: list[dict[str, str]], check_ids: set[str], verdicts: list[str],
                  seconds: float) -> dict[str, Any]:
    gold = [r["label"] for r in rows]
    inside = [i for i, r in enumerate(rows) if r["id"] in check_ids]
    outside = [i for i, r in enumerate(rows) if r["id"] not in check_ids]
    return {"all": label_report(gold, verdicts),
            "check_450": label_report([gold[i] for i in inside], [verdicts[i] for i in inside]),
            "other_1467": label_report([gold[i] for i in outside], [verdicts[i] for i in outside]),
            "verdicts_per_second": round(len(rows) / seconds, 1)}


def corpus_docs(shared: Path) -> list[list[str]]:
    """Prose sentences of each corpus PDF passage, grouped by paper (windows come from one passage)."""
    from engine.ingest.pipeline import parse_pdf

    docs = []
    for pdf in sorted((shared / "corpus/papers").glob("*.pdf")):
        try:
            parsed = parse_pdf(pdf)
        except EngineError:  # a fixture that does not parse simply adds no sentences
            continue
        sentences = documents_sentences([p.text for p in parsed.passages])
        docs.append([s for passage in sentences for s in passage])
    return [d for d in docs if len(d) >= 3]


def perturbation_suite(docs: list[list[str]], seed: int = 7, per_kind: int = 150) -> list[Pair]:
    rng = random.Random(seed)
    suite: list[Pair] = []
    for kind in ("true", "negation", "number", "direction", "appended"):
        pairs = make_pairs(docs, rng, per_doc=max(1, per_kind // max(1, len(docs)) + 2), kinds=(kind,),
                           references=False)
        rng.shuffle(pairs)
        suite.extend(pairs[:per_kind])
    return suite


def suite_report(pairs: list[Pair], supported: list[bool]) -> dict[str, Any]:
    kinds = sorted({p.kind for p in pairs})
    return {kind: {"pairs": sum(p.kind == kind for p in pairs),
                   "judged_supported": round(sum(s for p, s in zip(pairs, supported, strict=True) if p.kind == kind)
                                             / max(1, sum(p.kind == kind for p in pairs)), 3)} for kind in kinds}


def labelled_pairs(judges: dict[str, SupportJudge], scorer: SupportScorer) -> dict[str, Any]:
    """Precision and recall of "supported" on the 90 hand-labelled (sentence, passage) pairs from the corpus
    (tests/data/support_pairs.jsonl; the old scorer's threshold was fitted on them, so its row is optimistic)."""
    pairs = [json.loads(line) for line in (ROOT / "tests/data/support_pairs.jsonl").read_text().splitlines()]
    labels = [bool(p["label"]) for p in pairs]
    predictions = {name: [j.supports for j in judge.judge_many([(p["sentence"], p["passage"]) for p in pairs])]
                   for name, judge in judges.items()}
    predictions["old_scorer"] = [scorer.supports(p["sentence"], p["passage"]) is not None for p in pairs]
    result: dict[str, Any] = {"pairs": len(pairs), "positives": sum(labels)}
    for name, predicted in predictions.items():
        hits = sum(p and y for p, y in zip(predicted, labels, strict=True))
        result[name] = {"precision": round(hits / max(1, sum(predicted)), 3), "recall": round(hits / sum(labels), 3)}
    return result


def answer_timing(judge: SupportJudge, scorer: SupportScorer, docs: list[list[str]],
                  repeats: int = 3) -> dict[str, Any]:
    """Seconds to verify a 10-sentence answer (cited, mis-cited and uncited sentences) against 8 passages."""
    from engine.bibliography import Bibliography
    from engine.cite.verify import Verifier, verify_text
    from engine.types import Reference

    rng = random.Random(3)
    chosen = rng.sample([d for d in docs if len(d) >= 8], 8)
    passages = [" ".join(d[:6]) for d in chosen]
    sources = {n: Reference(n, f"p{n}", f"d{n}", "library", Bibliography(f"paper {n}"), text) for n, text in
               enumerate(passages, start=1)}
    sentences = []
    for i in range(10):
        doc = chosen[i % 8]
        marker = f" [{(i % 8) + 1 if i % 3 else ((i + 1) % 8) + 1}]" if i % 4 else ""
        sentences.append(doc[i % 6].rstrip(".") + marker + ".")
    text = " ".join(sentences)
    timings = []
    for _ in range(repeats):
        # A fresh scorer and judge each time: empty embedding and verdict caches, as for a new answer.
        fresh = SupportScorer(scorer.embedder, judge=SupportJudge(judge.model, judge.thresholds))
        started = time.perf_counter()
        verify_text(text, sources, Verifier(fresh))
        timings.append(time.perf_counter() - started)
    return {"sentences": 10, "passages": 8, "seconds_median": round(float(np.median(timings)), 2),
            "seconds_each": [round(t, 2) for t in timings]}


def held_out_pairs(data: Path) -> list[dict[str, Any]]:
    """The pairs benchmarks/train_judge.py never trained on: 5 % of each source (benchmarks/judge_data.py)."""
    if not data.is_file():
        raise SystemExit(f"{data} is missing; build it with: python benchmarks/judge_data.py --out {data}")
    with gzip.open(data, "rt", encoding="utf-8") as lines:
        return [row for row in map(json.loads, lines) if row["held_out"]]


def fit(model_dir: Path, data: Path) -> dict[str, Any]:
    """Choose the thresholds on held-out training-side pairs only; write them into judge.json.

    ``supported`` is the lowest P(supports) at which "supported" is right at least
    ``PRECISION_TARGET`` of the time, averaged over the three-way sources (each source weighs the
    same: the Wikipedia sets are large, the scientific ones small): a kept citation must be right,
    and a dropped one costs less than a wrong one. ``contradicted`` then maximises their mean
    balanced accuracy. FEVER is left out: its two-way pairs say nothing about "refutes"."""
    rows = [r for r in held_out_pairs(data) if r["source"] != "fever"]
    probs = PairModel(model_dir).probabilities([(r["claim"], r["evidence"]) for r in rows])
    labels = np.array([("supports", "refutes", "neutral").index(r["label"]) for r in rows])
    sources = np.array([r["source"] for r in rows])
    names = sorted(set(sources))
    candidates = np.round(np.arange(0.2, 0.96, 0.025), 3)

    def precision(t_support: float) -> float:
        shares = []
        for name in names:
            kept = (sources == name) & (probs[:, 0] >= t_support) & (probs[:, 0] >= probs[:, 1])
            shares.append(float((labels[kept] == SUPPORTS).mean()) if kept.any() else 1.0)
        return float(np.mean(shares))

    t_support = float(next((t for t in candidates if precision(t) >= PRECISION_TARGET), candidates[-1]))
    scores = {float(t): float(np.mean([_balanced(probs[sources == s], labels[sources == s], t_support, t)
                                       for s in names])) for t in candidates}
    t_refute = max(scores, key=lambda t: scores[t])
    thresholds = {"supported": t_support, "contradicted": t_refute}
    meta_file = model_dir / "judge.json"
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    meta["thresholds"] = thresholds
    meta["thresholds_fitted_on"] = dict(sorted(Counter(str(s) for s in sources).items()))
    meta["thresholds_held_out_precision_of_supported"] = round(precision(t_support), 3)
    meta["thresholds_held_out_balanced_accuracy"] = round(scores[t_refute], 3)
    meta_file.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return {"thresholds": thresholds, "precision_of_supported": round(precision(t_support), 3),
            "mean_balanced_accuracy": round(scores[t_refute], 3), "pairs": meta["thresholds_fitted_on"]}


def _auc(positive: list[float], negative: list[float]) -> float:
    """Probability that a positive outscores a negative (ties count half)."""
    pos, neg = np.asarray(positive)[:, None], np.asarray(negative)[None, :]
    return round(float((pos > neg).mean() + 0.5 * (pos == neg).mean()), 3)


def _balanced(probs: np.ndarray, labels: np.ndarray, t_support: float, t_refute: float) -> float:
    predicted = np.full(len(labels), NEUTRAL)
    refute = (probs[:, 1] >= t_refute) & (probs[:, 1] > probs[:, 0])
    support = (probs[:, 0] >= t_support) & (probs[:, 0] >= probs[:, 1])
    predicted[refute] = REFUTES
    predicted[support] = SUPPORTS
    return float(np.mean([np.mean(predicted[labels == c] == c) for c in (SUPPORTS, REFUTES, NEUTRAL)
                          if np.any(labels == c)]))


def old_judge_folder(revision: str) -> Path:
    """The judge Quire shipped at ``revision`` (from git history), extracted once under ~/.cache."""
    folder = Path.home() / ".cache" / "quire-train" / f"judge-{revision}"
    if not (folder / "model.int8.onnx").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("model.int8.onnx", "tokenizer.json", "judge.json"):
            blob = subprocess.run(["git", "-C", str(ROOT), "show", f"{revision}:resources/models/judge/{name}"],
                                  check=True, capture_output=True).stdout
            (folder / name).write_bytes(blob)
    return folder


def scholarqa_pairs(shared: Path) -> list[tuple[str, str, bool]]:
    """(sentence, snippet, cited) from ScholarQA-Multi's expert answers: each answer sentence against
    every snippet of its question, ``cited`` when the expert cited that snippet for that sentence."""
    from engine.cite.sentences import split_sentences

    marker = re.compile(r"\s*\[(\d+)\]")
    result = []
    for item in json.loads((shared / "eval/scholarqa-multi/human_answers.json").read_text(encoding="utf-8")):
        snippets = [c["text"] if isinstance(c["text"], str) else "" for c in item["ctxs"]]  # two are NaN
        for sentence in split_sentences(item["output"]):
            cited = {int(n) for n in marker.findall(sentence)}
            text = " ".join(marker.sub("", sentence).split())
            if not cited or len(text) < 30:
                continue
            result.extend((text, snippet, i in cited) for i, snippet in enumerate(snippets) if snippet.strip())
    return result


def model_report(model: PairModel, rows: list[dict[str, str]], check_ids: set[str],
                 held: list[dict[str, Any]]) -> dict[str, Any]:
    """The model alone (no checks, no windows): accuracy at argmax on each source's held-out pairs,
    and how well P(supports) separates HealthVer's labels (ROC AUC)."""
    probs = model.probabilities([(r["claim"], r["evidence"]) for r in held])
    accuracy = held_out_report(probs, held)
    hv = model.probabilities([(r["claim"], r["evidence"]) for r in rows])
    gold = np.array([r["label"] for r in rows])
    inside = np.array([r["id"] in check_ids for r in rows])
    aucs = {}
    for name, keep in (("all", np.ones(len(rows), dtype=bool)), ("check_450", inside), ("other_1467", ~inside)):
        s, g = hv[keep, 0], gold[keep]
        aucs[name] = {"supports_vs_refutes": _auc(s[g == "Supports"], s[g == "Refutes"]),
                      "supports_vs_rest": _auc(s[g == "Supports"], s[g != "Supports"])}
    return {"held_out_accuracy": accuracy, "healthver_roc_auc": aucs}


def judge_report(judge: SupportJudge, rows: list[dict[str, str]], check_ids: set[str], suite: list[Pair],
                 snippets: list[tuple[str, str, bool]]) -> dict[str, Any]:
    """The judge as Quire runs it (windows, checks, thresholds): HealthVer verdicts, the perturbation
    suite, ScholarQA-Multi's cited vs uncited snippets, and verdicts per second."""
    report: dict[str, Any] = {"healthver": judge_healthver(judge, rows, check_ids)}
    verdicts = judge.judge_many([(p.claim, p.evidence) for p in suite])
    report["perturbations"] = suite_report(suite, [v.supports for v in verdicts])
    started = time.perf_counter()
    judged = judge.judge_many([(sentence, snippet) for sentence, snippet, _ in snippets])
    seconds = time.perf_counter() - started
    cited = [j for j, (_, _, c) in zip(judged, snippets, strict=True) if c]
    other = [j for j, (_, _, c) in zip(judged, snippets, strict=True) if not c]
    report["scholarqa_snippets"] = {
        "cited_pairs": len(cited), "uncited_pairs": len(other),
        "cited_judged_supported": round(sum(j.supports for j in cited) / max(1, len(cited)), 3),
        "uncited_judged_supported": round(sum(j.supports for j in other) / max(1, len(other)), 3),
        "roc_auc_cited_vs_uncited": _auc([j.score for j in cited], [j.score for j in other])}
    report["verdicts_per_second"] = round(len(snippets) / seconds, 1)
    return report


def main() -> None:
    prepare_process()  # as the CLI does: offline hub client, passive OpenMP threads for llama.cpp
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/verify.json")
    parser.add_argument("--model-dir", type=Path, default=None)
    parser.add_argument("--compare", type=Path, help="another judge's folder, judged beside the shipped one")
    parser.add_argument("--old", default=OLD_JUDGE, help="git revision whose shipped judge is compared (default "
                        f"{OLD_JUDGE}, the judge trained on 2,400 pairs); 'none' to skip")
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the pairs of benchmarks/judge_data.py")
    parser.add_argument("--fit", action="store_true", help="fit the thresholds on held-out training-side data")
    parser.add_argument("--limit", type=int, help="HealthVer rows to judge (default all 1,917)")
    parser.add_argument("--per-kind", type=int, default=150, help="perturbation pairs of each kind")
    args = parser.parse_args()
    model_dir = args.model_dir or default_judge_folder()
    if args.fit:
        print(json.dumps(fit(model_dir, args.data), indent=2))
        return
    from engine.embed import SentenceTransformerEmbedder

    rows, check_ids = healthver(args.shared)
    rows = rows[: args.limit] if args.limit else rows
    held = held_out_pairs(args.data)
    docs = corpus_docs(args.shared)
    suite = perturbation_suite(docs, per_kind=args.per_kind)
    snippets = scholarqa_pairs(args.shared)
    machine = {"cpus": os.cpu_count(), "load_average_at_start": round(os.getloadavg()[0], 2)}
    shipped = SupportJudge(PairModel(model_dir))
    report: dict[str, Any] = {"machine": machine,
                              "model": json.loads((model_dir / "judge.json").read_text(encoding="utf-8"))}
    judges = {"shipped": shipped}
    if args.compare:
        judges["candidate"] = SupportJudge(PairModel(args.compare))
    scorer = SupportScorer(SentenceTransformerEmbedder(), judge=None)
    if args.old != "none":  # as it was shipped: the old model behind the similarity gate
        old_model = PairModel(old_judge_folder(args.old))
        judges[f"old_{args.old}"] = SupportJudge(old_model).gated(scorer.ranked_windows, scorer.threshold)
    for name, judge in judges.items():
        report[name] = {"thresholds": vars(judge.thresholds),
                        "model": model_report(judge.model, rows, check_ids, held),
                        "judge": judge_report(judge, rows, check_ids, suite, snippets)}
        print(name, json.dumps({"model": report[name]["model"]["healthver_roc_auc"]["all"],
                                "held_out": report[name]["model"]["held_out_accuracy"]["mean_accuracy"],
                                "healthver": report[name]["judge"]["healthver"]["all"]["judged_supported"]}),
              flush=True)
    report["labelled_corpus_pairs"] = labelled_pairs(judges, scorer)
    report["answer_verification"] = answer_timing(shipped, scorer, docs)
    print("answer verification:", json.dumps(report["answer_verification"]), flush=True)
    report["machine"]["load_average_at_end"] = round(os.getloadavg()[0], 2)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
