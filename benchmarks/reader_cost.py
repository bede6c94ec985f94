"""What the answer reader costs and changes, in one run, reader on against off (``generation.answer_reader``).

    python benchmarks/reader_cost.py digest --home H [--limit 40]    # COVID-QA check library (checks/reader)
    python benchmarks/reader_cost.py table --home H --question "..." [--limit-papers 20]
    python benchmarks/reader_cost.py litqa --home H                  # LitQA2 dev library (checks/fulltext)
    python benchmarks/reader_cost.py scholarqa --home H [--limit N]  # ScholarQA-Multi snippets as a datastore

``digest``: the check's questions (COVID-QA check file, the same seeded 100 as ../shared/checks/reader)
asked of H's library as digests, each twice, reader off then on; per question the "evidence" stage's
seconds (where the reader runs), the total, and whether the expert's answer is stated in the first
400 characters (as the check counts it). ``table``: the table of papers for one question over
H's library, reader off then on; seconds per cell, and every row's Answer cell for reading.
``litqa``: LitQA2 dev's 42 questions as digests, reader off then on: the ideal answer in the first 400
characters (as ../shared/checks/answers counts it) and whether the answer said nothing answers.
``scholarqa``: ScholarQA-Multi's questions over their snippets as digests (benchmarks/answers.py's
measure), reader off then on: the share of the expert's cited snippets the answer cites. The
machine's load average is recorded with the figures. Results: benchmarks/results/reader_cost.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.request import AskRequest, RequestOptions, Scope  # noqa: E402
from engine.service import Engine  # noqa: E402
from engine.synthesis.pipeline import NOT_ANSWERED  # noqa: E402

SHARED = ROOT.parent / "shared"
RESULTS = ROOT / "benchmarks" / "results" / "reader_cost.json"


def reader_setting(engine: Engine, on: bool) -> None:
    settings = engine.settings
    engine.save_settings(replace(settings, generation=replace(settings.generation, answer_reader=on)))


def check_questions(limit: int) -> list[tuple[str, str]]:
    """The seeded 100 (question, expert's answer) pairs ../shared/checks/reader asks, in its order."""
    data = json.loads((SHARED / "eval" / "covidqa" / "covidqa-check.json").read_text(encoding="utf-8"))["data"]
    questions = [(q["question"], q["answers"][0]["text"]) for a in data for q in a["paragraphs"][0]["qas"]
                 if q["answers"]]
    random.Random(5).shuffle(questions)
    return questions[:100][:limit]


_STOP = set("the a an of in on and or to is are was were be by for with as at from that this which it its their"
            .split())


def stated(gold: str, text: str) -> bool:
    """As ../shared/checks/reader counts it: 70 % of the answer's content words in ``text`` ([n], quotes removed)."""
    def words(s: str) -> list[str]:
        return [w for w in re.findall(r"[a-z0-9]+", s.lower()) if w not in _STOP]
    shown = set(words(re.sub(r"\[\d+\]|[“”\"]", "", text)))
    wanted = words(gold)
    return sum(w in shown for w in wanted) / max(1, len(wanted)) >= 0.7


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 3)


def digest(args: argparse.Namespace) -> dict[str, Any]:
    rows = []
    with Engine(Path(args.home)) as engine:
        before = engine.settings
        try:
            for question, gold in check_questions(args.limit):
                row: dict[str, Any] = {"question": question}
                for on in (False, True):
                    reader_setting(engine, on)
                    answer = engine.ask(AskRequest(question, scope=Scope(source="library"), mode="digest",
                                                   options=RequestOptions(rewrite=False, feedback=False, save=False)))
                    timings = dict(answer.timings)
                    row["on" if on else "off"] = {"evidence": timings.get("evidence", 0.0),
                                                  "total": timings.get("total", 0.0),
                                                  "first_400": stated(gold, answer.text[:400])}
                rows.append(row)
                print(json.dumps(row), flush=True)
        finally:
            engine.save_settings(before)
    added = [r["on"]["evidence"] - r["off"]["evidence"] for r in rows]
    return {"questions": len(rows),
            **{f"first_400_{k}": round(sum(r[k]["first_400"] for r in rows) / len(rows), 3) for k in ("off", "on")},
            "added_seconds_p50": percentile(added, 0.5),
            "added_seconds_p95": percentile(added, 0.95),
            "total_seconds_p50_off_on": [percentile([r["off"]["total"] for r in rows], 0.5),
                                         percentile([r["on"]["total"] for r in rows], 0.5)],
            "rows": rows}


def table(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"question": args.question}
    with Engine(Path(args.home)) as engine:
        before = engine.settings
        doc_ids = [d.id for d in engine.documents() if d.passage_count][: args.limit_papers]
        try:
            for on in (False, True):
                reader_setting(engine, on)
                started = time.perf_counter()
                made = engine.table(args.question, doc_ids=doc_ids, mode="quotes")
                seconds = time.perf_counter() - started
                cells = sum(len(row.cells) for row in made.rows)
                result["on" if on else "off"] = {
                    "papers": len(doc_ids), "rows": len(made.rows), "cells": cells, "seconds": round(seconds, 2),
                    "answer_cells": [{"paper": row.bib.title[:80], "answer": row.cells[0].text[:300]}
                                     for row in made.rows]}
        finally:
            engine.save_settings(before)
    return result


def litqa(args: argparse.Namespace) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from answers import litqa_questions, stated

    rows = []
    with Engine(Path(args.home)) as engine:
        before = engine.settings
        try:
            for question in litqa_questions("all"):
                row: dict[str, Any] = {"index": question["index"], "question": question["question"]}
                for on in (False, True):
                    reader_setting(engine, on)
                    answer = engine.ask(AskRequest(question["question"], mode="digest",
                                                   options=RequestOptions(rewrite=False, feedback=False, save=False)))
                    row["on" if on else "off"] = {"first_400": stated(question["ideal"], answer.text[:400]),
                                                  "nothing_answers": answer.text.startswith(NOT_ANSWERED),
                                                  "evidence_seconds": dict(answer.timings).get("evidence", 0.0)}
                rows.append(row)
                print(json.dumps(row), flush=True)
        finally:
            engine.save_settings(before)
    return {"questions": len(rows),
            **{f"first_400_{k}": round(sum(r[k]["first_400"] for r in rows) / len(rows), 3) for k in ("off", "on")},
            **{f"nothing_answers_{k}": sum(r[k]["nothing_answers"] for r in rows) for k in ("off", "on")},
            "rows": rows}


def scholarqa(args: argparse.Namespace) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from answers import run_scholarqa, scholarqa_engine

    engine, data = scholarqa_engine(Path(args.home))
    before = engine.settings
    result: dict[str, Any] = {}
    try:
        for on in (False, True):
            reader_setting(engine, on)
            result["on" if on else "off"] = run_scholarqa(engine, data[: args.limit], "digest", None)["summary"]
    finally:
        engine.save_settings(before)
        engine.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    first = commands.add_parser("digest")
    first.add_argument("--limit", type=int, default=40)
    second = commands.add_parser("table")
    second.add_argument("--question", required=True)
    second.add_argument("--limit-papers", type=int, default=66)
    third = commands.add_parser("litqa")
    fourth = commands.add_parser("scholarqa")
    fourth.add_argument("--limit", type=int)
    for command in (first, second, third, fourth):
        command.add_argument("--home", required=True)
    args = parser.parse_args()
    load = round(os.getloadavg()[0], 2)
    measured = {"digest": digest, "table": table, "litqa": litqa, "scholarqa": scholarqa}[args.command](args)
    measured["load_average_at_start"] = load
    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results[f"table: {args.question}" if args.command == "table" else args.command] = measured
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps({k: v for k, v in measured.items() if k != "rows"}, indent=1))


if __name__ == "__main__":
    main()
