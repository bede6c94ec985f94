"""The model as judge of which sentence answers (engine.synthesis.answer_judge), on LitQA2 dev.

    python benchmarks/answer_judge.py --home H --model WRITER.gguf

H is the LitQA2 library of ``benchmarks/answers.py litqa`` (built if empty). For every question the
candidates are the best sentences by the lexical answer score; the model judges the best 24 of them,
and the grid reports, per half, how often the top sentence after judging states the ideal answer for
each number of candidates judged (the best 8, 12, 16 or 24: a sentence's P(Yes) does not depend on
the others, so one run measures every count) and each weight of the model's logit(P(Yes)). The
weight and the count are chosen on the odd half. Writes benchmarks/results/answer_judge.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from answers import RESULTS, litqa_questions, prepare_home, stated

from engine.cite.support import SupportScorer
from engine.generate.llama import LlamaModel
from engine.process import prepare_process
from engine.synthesis import answer_judge
from engine.synthesis.evidence import diverse, extract_evidence, relevant, to_reference

COUNTS = (8, 12, 16, 24)  # candidates judged per question, simulated from the best 24


def judge(home: Path, model: str) -> None:
    """The model as judge of which sentence answers (engine.synthesis.answer_judge): its weight chosen on the
    odd half, reported on both. Per question the candidates are the best sentences by the lexical answer
    score; the question counts when the top sentence after judging states the ideal answer."""
    engine = prepare_home(home, False, litqa=True)
    scorer = SupportScorer(engine.support_embedder)
    lm = LlamaModel(model, context_size=4096)
    rows = []
    started = time.perf_counter()
    for question in litqa_questions("all"):
        hits = diverse(engine.search(question["question"], k=12, source="library"), 12, 0)
        refs = [to_reference(h, i + 1, engine.passage(h.passage_id).text) for i, h in enumerate(hits)]
        found = relevant(extract_evidence(question["question"], refs, scorer))
        pool = answer_judge.candidates(found, max(COUNTS))
        yes = [lm.reply_probabilities(answer_judge.messages(question["question"], q.text), ("Yes", "No"))[0]
               for q in pool]
        rows.append({"index": question["index"], "answer": [q.answer for q in pool], "yes": yes,
                     "states": [stated(question["ideal"], q.text) for q in pool]})
        print(question["index"], [round(p, 2) for p in yes], rows[-1]["states"], flush=True)
    seconds = (time.perf_counter() - started) / max(1, len(rows))

    def measure(half: str, weight: float, judged: int) -> int:
        wanted = {q["index"] for q in litqa_questions(half)}
        count = 0
        for row in rows:
            if row["index"] in wanted and row["states"]:
                p = np.clip(np.array(row["yes"][:judged]), 1e-6, 1 - 1e-6)
                score = np.array(row["answer"][:judged]) + weight * np.log(p / (1 - p))
                count += row["states"][int(np.argmax(score))]
        return count

    grid = [{"candidates": k, "weight": w, "odd": measure("odd", w, k), "even": measure("even", w, k)}
            for k in COUNTS for w in (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)]
    reachable = {k: {half: sum(any(r["states"][:k]) for r in rows if r["index"] % 2 == (half == "odd"))
                     for half in ("odd", "even")} for k in COUNTS}
    result = {"model": Path(model).name, "shipped_candidates": answer_judge.CANDIDATES,
              "shipped_weight": answer_judge.WEIGHT, "questions_per_half": 21,
              "candidates_hold_the_answer": reachable, "grid": grid,
              "seconds_per_question_judging_24": round(seconds, 1), "questions": rows}
    print(json.dumps({k: v for k, v in result.items() if k != "questions"}, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "answer_judge.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"wrote {RESULTS / 'answer_judge.json'}")


def main() -> None:
    prepare_process()  # as the CLI does: offline hub client, passive OpenMP threads for llama.cpp
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True, help="the LitQA2 library (built if empty)")
    parser.add_argument("--model", required=True, help="a GGUF model that can write, e.g. the fetch-writer model")
    args = parser.parse_args()
    judge(Path(args.home), args.model)


if __name__ == "__main__":
    main()
