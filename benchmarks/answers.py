"""Answer quality and cost: the support scorer, the golden questions, and ScholarQA-Multi.

    python benchmarks/answers.py pairs                     # scorer precision/recall on labelled pairs (+ fit)
    python benchmarks/answers.py golden --home H [--mode auto|digest|write] [--limit N] [--datastore]
    python benchmarks/answers.py relevance --home H        # relevance of golden vs off-topic questions
    python benchmarks/answers.py scholarqa --home H [--mode digest] [--limit N]

``golden`` ingests ../shared/corpus/papers into H if it is empty (``--datastore`` also imports the
sample datastore), asks the 20 golden questions with the default model and reports, per question
and overall: dangling [n] (must be 0), quotes not verbatim (must be 0), unsupported share,
whether an expected paper was cited, time per stage, and prompt tokens evaluated vs sent per
step. ``scholarqa`` imports the 647 expert-cited snippets as datastore ``scholarqa`` and reports
the share of each expert answer's snippets Quire cites too, unsupported share and length ratio.
Results go to benchmarks/out/answers-<command>.json. Figures in the README were taken on the
shared, heavily loaded 2-core development machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from engine.cite.markers import cited_numbers
from engine.cite.support import SupportScorer
from engine.embed import SentenceTransformerEmbedder
from engine.service import Engine
from engine.synthesis.evidence import extract_evidence, to_reference
from engine.types import Answer

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("QUIRE_SHARED", ROOT.parent / "shared"))
OUT = ROOT / "benchmarks" / "out"
PAIRS = ROOT / "tests" / "data" / "support_pairs.jsonl"
GOLDEN = ROOT / "tests" / "golden" / "questions.json"


def save(name: str, data: Any) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"answers-{name}.json").write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {OUT / f'answers-{name}.json'}")


# --- the support scorer ---------------------------------------------------------------------

def pairs_command(_: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
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
    result = {"pairs": len(rows), "supported": int(labels.sum()),
              "shipped": {"weight": scorer.weight, "threshold": scorer.threshold, "precision": round(p, 3),
                          "recall": round(r, 3)},
              "insert_threshold": {"threshold": scorer.insert_threshold, "precision": round(insert_p, 3),
                                   "recall": round(insert_r, 3)},
              "refit_all": {"weight": round(fitted_weight, 2), "threshold": round(fitted_threshold, 2)},
              "five_fold_cv": {"precision": round(cv_p, 3), "recall": round(cv_r, 3)}}
    print(json.dumps(result, indent=2))
    save("pairs", result)


# --- the golden questions -------------------------------------------------------------------

def prepare_home(home: Path, datastore: bool) -> Engine:
    engine = Engine(home)
    if not engine.documents():
        print("ingesting the corpus ...", file=sys.stderr)
        for _ in engine.add_documents([SHARED / "corpus" / "papers"]):
            pass
    if datastore and not any(d.name == "cs" for d in engine.datastores()):
        print("importing the sample datastore (slow) ...", file=sys.stderr)
        engine.add_datastore(SHARED / "datastore" / "cs-sample.jsonl.gz", "cs")
    return engine


def check_answer(answer: Answer) -> dict[str, Any]:
    given = {r.n: r for r in answer.contexts}
    dangling = [n for n in cited_numbers(answer.text) if n not in given]
    not_verbatim = sum(1 for s in answer.sentences for c in s.citations
                       if c.n not in given or c.quote not in given[c.n].text)
    return {"dangling": len(dangling), "not_verbatim": not_verbatim}


def golden_command(args: argparse.Namespace) -> None:
    engine = prepare_home(Path(args.home), args.datastore)
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    names = {d.id: Path(d.path).name for d in engine.documents()}
    rows = []
    wanted = {"all": ("library", "datastore"), "library": ("library",), "datastore": ("datastore",)}[args.questions]
    questions = [q for q in golden["questions"]
                 if q["source"] in wanted and (args.datastore or q["source"] == "library")][: args.limit]
    for question in questions:
        started = time.perf_counter()
        answer = engine.ask(question["question"], mode=args.mode, feedback=not args.no_feedback,
                            source="library" if question["source"] == "library" else "all", save=False)
        cited = {names.get(r.doc_id, r.doc_id) for r in answer.references}
        row = {"id": question["id"], "mode": answer.mode.value, "notice": answer.notice,
               "expected_cited": bool(cited & set(question["expected"])), "cited": sorted(cited),
               "sentences": len(answer.sentences), "unsupported_share": round(answer.unsupported_share, 3),
               "timings": dict(answer.timings), "steps": [vars(s) for s in answer.steps],
               "seconds": round(time.perf_counter() - started, 1), **check_answer(answer),
               "answer": answer.text}
        rows.append(row)
        print(f"{row['id']:<28} {row['mode']:<11} expected cited: {row['expected_cited']!s:<5} "
              f"unsupported {row['unsupported_share']:.2f} dangling {row['dangling']} "
              f"not verbatim {row['not_verbatim']} {row['seconds']:.0f}s", flush=True)
    summary = summarise(rows)
    print(json.dumps(summary, indent=2))
    save(f"golden-{args.mode}-{args.questions}", {"summary": summary, "questions": rows})


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    stages: dict[str, list[float]] = {}
    for row in rows:
        for stage, seconds in row["timings"].items():
            stages.setdefault(stage, []).append(seconds)
    steps: dict[str, list[tuple[int, int]]] = {}
    for row in rows:
        for step in row["steps"]:
            kind = step["step"].split()[0]
            if kind == "draft":  # the first call evaluates the evidence; later drafts only their turn
                kind = "draft 1" if step["step"] == "draft 1" else "draft 2+"
            steps.setdefault(kind, []).append((step["prompt_tokens_evaluated"], step["prompt_tokens"]))
    return {
        "questions": len(rows),
        "modes": {m: sum(r["mode"] == m for r in rows) for m in {r["mode"] for r in rows}},
        "dangling_total": sum(r["dangling"] for r in rows),
        "not_verbatim_total": sum(r["not_verbatim"] for r in rows),
        "expected_paper_cited": round(sum(r["expected_cited"] for r in rows) / max(1, len(rows)), 3),
        "unsupported_share_mean": round(float(np.mean([r["unsupported_share"] for r in rows])), 3) if rows else 0,
        "median_seconds_per_stage": {k: round(float(np.median(v)), 2) for k, v in stages.items()},
        "prompt_tokens_evaluated_vs_sent": {k: {"evaluated": sum(e for e, _ in v), "sent": sum(s for _, s in v),
                                                "share": round(sum(e for e, _ in v) / max(1, sum(s for _, s in v)), 3)}
                                            for k, v in steps.items()},
    }


def relevance_command(args: argparse.Namespace) -> None:
    """Best evidence relevance for golden (library) questions vs off-topic ones: where to put the threshold."""
    engine = prepare_home(Path(args.home), False)
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    scorer = SupportScorer(engine.embedder)

    def best(question: str) -> float:
        hits = engine.search(question, k=8, source="library", rewrite=False)
        refs = [to_reference(h, i + 1) for i, h in enumerate(hits)]
        return max((e.relevance for e in extract_evidence(question, refs, scorer)), default=0.0)

    on = [best(q["question"]) for q in golden["questions"] if q["source"] == "library"][: args.limit]
    off = [best(q) for q in golden["off_topic"]]
    result = {"on_topic_min": round(min(on), 3), "on_topic": [round(x, 3) for x in on],
              "off_topic_max": round(max(off), 3), "off_topic": [round(x, 3) for x in off]}
    print(json.dumps(result, indent=2))
    save("relevance", result)


# --- ScholarQA-Multi --------------------------------------------------------------------------

def scholarqa_command(args: argparse.Namespace) -> None:
    data = json.loads((SHARED / "eval" / "scholarqa-multi" / "human_answers.json").read_text(encoding="utf-8"))
    engine = Engine(Path(args.home))
    if not any(d.name == "scholarqa" for d in engine.datastores()):
        records = OUT / "scholarqa-snippets.jsonl"
        OUT.mkdir(parents=True, exist_ok=True)
        with records.open("w", encoding="utf-8") as out:
            for item in data:
                for index, ctx in enumerate(item["ctxs"]):
                    out.write(json.dumps({"id": f"{item['id']}:{index}", "source": "scholarqa", "title": ctx["title"],
                                          "text": ctx["text"], "year": ctx.get("year"), "url": ctx.get("url", "")})
                              + "\n")
        engine.add_datastore(records, "scholarqa")
    rows = []
    for item in data[: args.limit]:
        expert_cited = {f"{item['id']}:{n}" for n in map(int, re.findall(r"\[(\d+)\]", item["output"]))}
        answer = engine.ask(item["input"], mode=args.mode, feedback=not args.no_feedback, source="scholarqa",
                            save=False)
        ours = {r.doc_id for r in answer.references}
        words = len(re.sub(r"\[\d+\]", "", answer.text).split())
        expert_words = len(re.sub(r"\[\d+\]", "", item["output"]).split())
        rows.append({"id": item["id"], "mode": answer.mode.value,
                     "expert_snippets_cited": round(len(ours & expert_cited) / max(1, len(expert_cited)), 3),
                     "unsupported_share": round(answer.unsupported_share, 3), "words": words,
                     "expert_words": expert_words, **check_answer(answer), "timings": dict(answer.timings)})
        print(json.dumps(rows[-1]), flush=True)
    summary = {"questions": len(rows),
               "expert_snippet_recall": round(float(np.mean([r["expert_snippets_cited"] for r in rows])), 3),
               "unsupported_share_mean": round(float(np.mean([r["unsupported_share"] for r in rows])), 3),
               "length_ratio_median": round(float(np.median([r["words"] / max(1, r["expert_words"])
                                                             for r in rows])), 3),
               "dangling_total": sum(r["dangling"] for r in rows),
               "not_verbatim_total": sum(r["not_verbatim"] for r in rows)}
    print(json.dumps(summary, indent=2))
    save(f"scholarqa-{args.mode}", {"summary": summary, "questions": rows, "answer_example": rows[:1]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("pairs").set_defaults(run=pairs_command)
    for name, run in (("golden", golden_command), ("relevance", relevance_command), ("scholarqa", scholarqa_command)):
        command = commands.add_parser(name)
        command.add_argument("--home", required=True)
        command.add_argument("--limit", type=int, default=None)
        command.add_argument("--mode", default="auto", choices=("auto", "write", "digest"))
        command.add_argument("--no-feedback", action="store_true")
        command.add_argument("--datastore", action="store_true")
        command.add_argument("--questions", default="all", choices=("all", "library", "datastore"))
        command.set_defaults(run=run)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
