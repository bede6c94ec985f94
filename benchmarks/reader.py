"""The answer reader measured: in-paper ranking on COVID-QA's check papers, its threshold, its speed.

    python benchmarks/reader_data.py                 # once: the questions and their papers' sentences
    python benchmarks/reader.py [--fit] [--limit N]
    python benchmarks/reader.py --readers OLD NEW [--covidqa FILE] [--selqa FILE]   # readers side by side

``--readers`` measures each reader folder in one run on a COVID-QA-format file (default: the check
split), Evidence Inference's validation trials and a SelQA-format file, with each reader's own
"nothing answers" (its best logit under ``no_answer_logit``): benchmarks/results/reader_compare.json.

For every question of COVID-QA's check file (14 papers never fitted on), every quotable sentence of
its paper is ranked, and a question counts when a sentence holding (part of) the expert's answer span
is first, or in the top 3. Rankers, all measured in this one run:

- ``bm25``: BM25 over the paper's sentences;
- ``hand``: the hand-weighted answer score used before the reader (embedding cosine + shared content
  words + question-type bonuses - a length penalty), engine.synthesis.evidence.hand_scores;
- ``reader``: the shipped reader alone;
- ``combined``: what the product uses (engine.synthesis.evidence.answer_scores): the reader with the
  hand score added at the weight in reader.json.

``--fit`` chooses on the six COVID-QA training papers the reader never trained on (train_reader.py's
held-out papers) the hand score's weight in ``combined`` (grid; written to reader.json). It also
measures whether the reader could say that nothing answers: each held-out question is read against
its own paper (the answer is there) and against another paper (it is not), a threshold keeps 95 % of
the first, and the check papers report how often a question asked of the wrong paper falls under it.
That threshold is not shipped: on LitQA2 it told 25 of 42 answerable questions that nothing answers
(benchmarks/reader_cost.py litqa, docs/history/answers.md). The reader reads the hand score's best
``answer_read_limit`` sentences, as the product does (``--read-all``: every sentence).
Results: benchmarks/results/reader.json.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from reader_data import DEFAULT_OUT  # noqa: E402
from sentence_bm25 import bm25_order  # noqa: E402
from train_reader import dev_papers, read_data  # noqa: E402

from engine.cite.reader import AnswerReader, default_reader_folder, reader_text  # noqa: E402
from engine.cite.support import SupportScorer  # noqa: E402
from engine.embed import SentenceTransformerEmbedder  # noqa: E402
from engine.synthesis.evidence import ANSWER_READ_LIMIT, answer_scores, hand_scores  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "reader.json"
KEEP_ANSWERABLE = 0.95


def reader_and_scorer(folder: Path | None = None) -> tuple[AnswerReader, SupportScorer]:
    """The shipped reader (or the one in ``folder``) and the scorer the product ranks with (the float embedder,
    no judge)."""
    reader = AnswerReader(folder)
    return reader, SupportScorer(SentenceTransformerEmbedder(quantize=False), judge=None, reader=reader)


def rank_stats(orders: list[list[int]], answers: list[list[int]]) -> dict[str, float]:
    n = max(1, len(orders))
    return {"first": round(sum(o[0] in a for o, a in zip(orders, answers, strict=True) if o) / n, 4),
            "top3": round(sum(any(i in a for i in o[:3]) for o, a in zip(orders, answers, strict=True)) / n, 4)}


def descending(values: np.ndarray) -> list[int]:
    return [int(i) for i in np.argsort(-values, kind="stable")]


def score_questions(data: dict[str, Any], questions: list[dict[str, Any]], reader: AnswerReader,
                    scorer: SupportScorer, read_limit: int | None) -> list[dict[str, Any]]:
    """Each question's hand scores and reader logits over its own paper's sentences; the reader reads the
    hand score's best ``read_limit`` (all: None) and the rest get -inf, as in the product."""
    rows = []
    for question in questions:
        candidates = data["papers"][question["paper"]]
        texts = [c["text"] for c in candidates]
        hand = hand_scores(question["question"], texts, scorer)
        chosen = descending(hand)[:read_limit] if read_limit else list(range(len(texts)))
        started = time.perf_counter()
        scores = reader.scores(question["question"], [reader_text(candidates[i]["text"], candidates[i]["before"],
                                                                  candidates[i]["after"]) for i in chosen])
        seconds = time.perf_counter() - started
        read = np.full(len(texts), -np.inf, dtype=np.float32)
        read[chosen] = scores
        rows.append({"question": question, "read": read, "hand": hand,
                     "bm25": bm25_order(question["question"], texts), "seconds": seconds,
                     "per_sentence_ms": 1000 * seconds / max(1, len(chosen))})
    return rows


def cached(path: Path | None, make: Any) -> list[dict[str, Any]]:
    """``make()``'s rows, kept in ``path`` (reading every sentence of 285 questions takes ~20 minutes)."""
    if path is not None and path.is_file():
        with path.open("rb") as file:
            rows: list[dict[str, Any]] = pickle.load(file)
        return rows
    rows = make()
    if path is not None:
        with path.open("wb") as file:
            pickle.dump(rows, file)
    return rows


def report(rows: list[dict[str, Any]], weight: float) -> dict[str, Any]:
    answers = [r["question"]["also"] for r in rows]
    result: dict[str, Any] = {
        "questions": len(rows),
        "bm25": rank_stats([r["bm25"] for r in rows], answers),
        "hand": rank_stats([descending(r["hand"]) for r in rows], answers),
        "reader": rank_stats([descending(r["read"]) for r in rows], answers),
        "combined": rank_stats([descending(answer_scores(r["read"], r["hand"], weight)) for r in rows], answers)}
    # The reader reading only the hand score's best k sentences (a table cell's read_limit): the answer must
    # be among them, and a whole paper is a harder pool than a cell's four passages.
    for k in (8, 16, 32):
        limited = []
        for r in rows:
            kept = set(descending(r["hand"])[:k])
            combined = answer_scores(r["read"], r["hand"], weight)
            limited.append(descending(np.array([combined[i] if i in kept else -np.inf
                                                for i in range(len(combined))])))
        result[f"combined_reading_hand_top{k}"] = rank_stats(limited, answers)
    return result


def best_of(row: dict[str, Any], weight: float) -> float:
    """The best combined score over the row's sentences: under the threshold, nothing answers."""
    return float(np.max(answer_scores(row["read"], row["hand"], weight))) if len(row["read"]) else -1e9


def wrong_paper_rows(data: dict[str, Any], questions: list[dict[str, Any]], papers: list[str], reader: AnswerReader,
                     scorer: SupportScorer, read_limit: int | None, seed: int = 3) -> list[dict[str, Any]]:
    """Each question read against a paper it was not asked of (its answer is not there)."""
    rng = random.Random(seed)
    moved = []
    for question in questions:
        other = rng.choice([p for p in papers if p != question["paper"]])
        moved.append({**question, "paper": other, "also": []})
    return score_questions(data, moved, reader, scorer, read_limit)


def no_answer_stats(own: list[dict[str, Any]], wrong: list[dict[str, Any]], threshold: float) -> dict[str, float]:
    """The reader's own "nothing here answers" (its best logit under ``threshold``, 0 for a reader trained
    with a "nothing answers" option): answerable questions kept, wrong-paper questions told nothing answers."""
    def best(row: dict[str, Any]) -> float:
        return float(np.max(row["read"])) if len(row["read"]) else -1e9
    return {"threshold": threshold,
            "answerable_kept": round(sum(best(r) >= threshold for r in own) / max(1, len(own)), 4),
            "wrong_paper_told_nothing_answers": round(sum(best(r) < threshold for r in wrong) / max(1, len(wrong)), 4)}


def compare(args: argparse.Namespace) -> None:
    """Each reader in ``--readers`` on every set, in one run: COVID-QA-format check papers, Evidence Inference
    validation trials, SelQA; results in benchmarks/results/reader_compare.json."""
    from reader_sets import covidqa_file, selqa

    data = read_data(args.data)
    checks = {"covidqa_check": (covidqa_file(args.covidqa) if args.covidqa else data, "check"),
              "evidence_validation": (data, "check-ei")}
    limit = None if args.read_all else ANSWER_READ_LIMIT
    out: dict[str, Any] = {"command": " ".join(["python benchmarks/reader.py", *sys.argv[1:]]), "readers": {}}
    for folder in args.readers:
        reader, scorer = reader_and_scorer(folder)
        weight = reader.hand_weight
        threshold = float(reader.model.meta.get("no_answer_logit", 0.0))
        measured: dict[str, Any] = {"hand_weight": weight}
        for name, (source, split) in checks.items():
            questions = [q for q in source["questions"] if q["split"] == split][:args.limit]
            if not questions:
                continue
            rows = score_questions(source, questions, reader, scorer, limit)
            measured[name] = report(rows, weight)
            papers = sorted({q["paper"] for q in questions})
            wrong = wrong_paper_rows(source, questions, papers, reader, scorer, limit)
            measured[name]["nothing_answers"] = no_answer_stats(rows, wrong, threshold)
            print(folder, name, json.dumps(measured[name]), flush=True)
        if args.selqa:
            measured["selqa"] = selqa(args.selqa, reader, args.limit)
            print(folder, "selqa", json.dumps(measured["selqa"]), flush=True)
        out["readers"][str(folder)] = measured
    target = ROOT / "benchmarks" / "results" / "reader_compare.json"
    target.write_text(json.dumps(out, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--readers", type=Path, nargs="*",
                        help="compare these reader folders on every set in one run (reader_compare.json)")
    parser.add_argument("--covidqa", type=Path, help="a COVID-QA-format file to check on (default: the check split)")
    parser.add_argument("--selqa", type=Path, help="a SelQA-format file (with --readers): MAP / MRR")
    parser.add_argument("--fit", action="store_true", help="fit the weight and threshold on held-out training papers")
    parser.add_argument("--read-all", action="store_true",
                        help="the reader reads every sentence (default: the hand score's best, as the product does)")
    parser.add_argument("--cache", type=Path, help="a folder to keep the scored rows in (and reuse them from)")
    parser.add_argument("--limit", type=int, help="at most this many check questions (a quick look)")
    args = parser.parse_args()
    if args.readers:
        compare(args)
        return
    data = read_data(args.data)
    reader, scorer = reader_and_scorer()
    meta_file = default_reader_folder() / "reader.json"
    meta = json.loads(meta_file.read_text())
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    limit = None if args.read_all else ANSWER_READ_LIMIT
    suffix = "all" if limit is None else f"top{limit}"

    def keep(name: str) -> Path | None:
        if args.cache is None:
            return None
        args.cache.mkdir(parents=True, exist_ok=True)
        return args.cache / f"{name}-{suffix}.pickle"

    if args.fit:
        held = dev_papers(data["questions"])
        dev = [q for q in data["questions"] if q["paper"] in held]
        rows = cached(keep("dev"), lambda: score_questions(data, dev, reader, scorer, limit))
        grid = {w: report(rows, w)["combined"] for w in (0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0)}
        weight = max(grid, key=lambda w: (grid[w]["first"] + grid[w]["top3"], -w))
        own = sorted(best_of(r, weight) for r in rows)
        threshold = own[int((1 - KEEP_ANSWERABLE) * len(own))]
        wrong = [best_of(r, weight) for r in cached(keep("dev-wrong"), lambda: wrong_paper_rows(
            data, dev, sorted(held), reader, scorer, limit))]
        meta["combine"] = {"hand_weight": weight}
        results["threshold"] = round(threshold, 3)  # measured, not shipped: see the module docstring
        meta_file.write_text(json.dumps(meta, indent=2) + "\n")
        results["fit"] = {"papers": len(held), "questions": len(dev), "read_limit": limit,
                          "hand_weight_grid": {str(k): v for k, v in grid.items()},
                          "hand_weight": weight, "threshold": round(threshold, 3),
                          "answerable_kept": KEEP_ANSWERABLE,
                          "wrong_paper_told_nothing_answers": round(sum(s < threshold for s in wrong) / len(wrong), 4)}
        print(json.dumps(results["fit"], indent=1))

    weight = float(meta.get("combine", {}).get("hand_weight", 0.0))
    threshold = float(results.get("threshold", 0.0))
    check = [q for q in data["questions"] if q["split"] == "check"][:args.limit]
    rows = cached(keep("check"), lambda: score_questions(data, check, reader, scorer, limit))
    measured = report(rows, weight)
    measured["answer_quotable"] = round(sum(bool(q["also"]) for q in check) / len(check), 4)
    own = [best_of(r, weight) for r in rows]
    seconds = sorted(r["per_sentence_ms"] for r in rows)
    measured.update({
        "read_limit": limit, "hand_weight": weight, "threshold": threshold,
        "own_paper_answer_found": round(sum(s >= threshold for s in own) / len(own), 4),
        "sentences_per_question": round(statistics.mean(len(r["read"]) for r in rows), 1),
        "reader_ms_per_sentence_p50": round(seconds[len(seconds) // 2], 2),
        "reader_ms_per_sentence_p95": round(seconds[int(0.95 * (len(seconds) - 1))], 2),
        "load_average": round(os.getloadavg()[0], 2),
        "command": "python benchmarks/reader.py" + (" --fit" if args.fit else "") + (" --read-all" if args.read_all
                                                                                      else ""),
    })
    if limit is not None:  # a question asked of the wrong paper: is it told that nothing answers?
        check_papers = sorted({q["paper"] for q in check})
        wrong = [best_of(r, weight) for r in cached(keep("check-wrong"), lambda: wrong_paper_rows(
            data, check, check_papers, reader, scorer, limit))]
        measured["wrong_paper_told_nothing_answers"] = round(sum(s < threshold for s in wrong) / len(wrong), 4)
    results["check" if limit is not None else "check_reading_every_sentence"] = measured
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(measured, indent=1))


if __name__ == "__main__":
    main()
