"""Could the answer reader's best score tell, in a whole library, that nothing answers?

    python benchmarks/experiments/reader_no_answer.py [--rows FILE]

The in-paper measurement (benchmarks/reader.py --fit) found that a threshold on the reader's best score
does not carry across fields. Here it is measured where the product would use it: each question asked
through ``Engine.ask`` (digest, library only, no rewriting) of a whole library, with and without the
paper that answers it, recording the best combined score (reader logit + hand weight x hand score) of
the sentences the reader read:

- LitQA2 dev (../shared/checks/fulltext's home), 42 questions;
- the COVID-QA check library (../shared/checks/reader's home), its seeded 100 questions;
- ScholarQA-Multi's 108 questions over their snippet datastore (answerable: broad questions whose
  snippets the experts cited; no "without" case).

A threshold is chosen on LitQA2's odd questions and ScholarQA's first half as the highest that silences
no answerable question there, and reported on the rest. Answers that already say nothing answers (no
passage mentions a name the question gives, or none addresses it) are counted as said either way.
Results: benchmarks/results/reader_no_answer.json; conclusions in docs/history/answers.md.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from answers import SHARED, litqa_questions, scholarqa_engine  # noqa: E402
from no_answer import says_nothing_answers  # noqa: E402
from opening import ASKED, CHECK_HOME  # noqa: E402

from engine.request import AskRequest, Scope  # noqa: E402
from engine.service import Engine  # noqa: E402
from engine.synthesis import evidence  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "reader_no_answer.json"
GRID = (-5.0, -4.5, -4.0, -3.5, -3.0, -2.75, -2.5, -2.0)

_scored: list[np.ndarray] = []
_answer_scores = evidence.answer_scores


def _recording(read: np.ndarray, hand: np.ndarray, weight: float) -> np.ndarray:
    combined = _answer_scores(read, hand, weight)
    _scored.append(np.asarray(combined, dtype=float))
    return combined


def asked(engine: Engine, question: str, scope: Scope) -> dict[str, Any]:
    """The best combined score the reader gave while answering, and whether the answer says nothing answers."""
    _scored.clear()
    answer = engine.ask(AskRequest(question, scope=scope, mode="digest", options=ASKED))
    read = [s[np.isfinite(s)] for s in _scored]
    best = max((float(s.max()) for s in read if len(s)), default=None)
    return {"best": None if best is None else round(best, 3), "nothing": says_nothing_answers(answer.mode, answer.text)}


def without(engine: Engine, file_name: str) -> Scope:
    return Scope(source="library", doc_ids=tuple(d.id for d in engine.documents() if Path(d.path).name != file_name))


def collect() -> list[dict[str, Any]]:
    evidence.answer_scores = _recording
    rows: list[dict[str, Any]] = []
    with Engine(CHECK_HOME / "fulltext") as engine:
        for question in litqa_questions("all"):
            for kind, scope in (("with", Scope(source="library")), ("without", without(engine, question["pdf"]))):
                rows.append({"set": "litqa", "index": question["index"], "kind": kind,
                             **asked(engine, question["question"], scope)})
                print(rows[-1], flush=True)
    data = json.loads((SHARED / "eval" / "covidqa" / "covidqa-check.json").read_text(encoding="utf-8"))["data"]
    questions = [(q["question"], a["paragraphs"][0]["document_id"]) for a in data for q in a["paragraphs"][0]["qas"]
                 if q["answers"]]
    random.Random(5).shuffle(questions)  # the check's own seeded order (benchmarks/reader_cost.py)
    with Engine(CHECK_HOME / "reader" / "q") as engine:
        for index, (question, paper) in enumerate(questions[:100]):
            scopes = (("with", Scope(source="library")), ("without", without(engine, f"covidqa-{paper}.pdf")))
            for kind, scope in scopes:
                rows.append({"set": "covid", "index": index, "kind": kind, **asked(engine, question, scope)})
                print(rows[-1], flush=True)
    scholar, items = scholarqa_engine(CHECK_HOME / "scholarqa")
    with scholar:
        for index, item in enumerate(items):
            rows.append({"set": "scholarqa", "index": index, "kind": "with",
                         **asked(scholar, item["input"], Scope(source="scholarqa"))})
            print(rows[-1], flush=True)
    return rows


def fitting(row: dict[str, Any]) -> bool:
    return (row["set"] == "litqa" and row["index"] % 2 == 1) or (row["set"] == "scholarqa" and row["index"] < 54)


def counts(rows: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """Per set and part: answerable questions newly told nothing answers, and unanswerable ones told so."""
    def under(row: dict[str, Any]) -> bool:
        return row["best"] is None or row["best"] < threshold
    found: dict[str, Any] = {}
    for name in ("litqa", "scholarqa", "covid"):
        for part in ("fit", "test"):
            chosen = [r for r in rows if r["set"] == name and fitting(r) == (part == "fit")]
            if not chosen:
                continue
            answerable = [r for r in chosen if r["kind"] == "with"]
            missing = [r for r in chosen if r["kind"] == "without"]
            found[f"{name}_{part}"] = {
                "answerable": len(answerable),
                "answerable_newly_silenced": sum(under(r) and not r["nothing"] for r in answerable),
                "unanswerable": len(missing),
                "unanswerable_said_before": sum(r["nothing"] for r in missing),
                "unanswerable_said_with_threshold": sum(r["nothing"] or under(r) for r in missing)}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=Path, help="reuse rows saved by an earlier run (its results file)")
    args = parser.parse_args()
    rows = json.loads(args.rows.read_text(encoding="utf-8"))["rows"] if args.rows else collect()
    grid = {str(t): counts(rows, t) for t in GRID}
    chosen = max((t for t in GRID if all(v["answerable_newly_silenced"] == 0 for k, v in grid[str(t)].items()
                                         if k.endswith("_fit"))), default=None)
    result = {"threshold_chosen_on_fit": chosen, "grid": grid, "rows": rows}
    RESULTS.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"chosen": chosen, "at_chosen": grid[str(chosen)] if chosen is not None else None}, indent=1))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
