"""What a digest opens with, on two sets at once: does its first 400 characters state the answer?

    python benchmarks/opening.py --label NAME [--covid-home H] [--litqa-home H] [--limit N]

- COVID-QA check library (the 14 check papers typeset and ingested as ../shared/checks/reader does;
  its home is that check's, ``$CHECK_HOME/reader/q``): the same seeded 100 questions, counted as the
  check counts them (70 % of the expert's answer's content words in the first 400 characters);
- LitQA2 dev library (../shared/checks/fulltext's home): the 42 questions, counted as
  ../shared/checks/answers counts them (the ideal answer in the first 400 characters).

Both are asked as the product asks them (digest, library only, no rewriting), so the figure moves only
with what the digest opens with. Neither set is fitted on here: a change is kept only when it does not
lower either. Results (per label, with the commit and the machine's load): benchmarks/results/opening.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from answers import litqa_questions  # noqa: E402
from answers import stated as litqa_stated  # noqa: E402
from reader_cost import check_questions  # noqa: E402
from reader_cost import stated as covid_stated  # noqa: E402

from engine.request import AskRequest, RequestOptions, Scope  # noqa: E402
from engine.service import Engine  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "opening.json"
CHECK_HOME = Path(os.environ.get("CHECK_HOME", "/tmp/quire-checks"))
ASKED = RequestOptions(rewrite=False, feedback=False, save=False)


def opening(home: Path, questions: list[tuple[str, str]], stated: Any) -> dict[str, Any]:
    rows = []
    with Engine(home) as engine:
        for question, gold in questions:
            started = time.perf_counter()
            answer = engine.ask(AskRequest(question, scope=Scope(source="library"), mode="digest", options=ASKED))
            rows.append({"question": question, "stated": bool(stated(gold, answer.text[:400])),
                         "first_400": answer.text[:400], "seconds": round(time.perf_counter() - started, 2)})
            print(json.dumps({k: rows[-1][k] for k in ("stated", "seconds", "question")}), flush=True)
    return {"questions": len(rows), "stated_first_400": round(sum(r["stated"] for r in rows) / max(1, len(rows)), 3),
            "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--label", required=True, help="what this run measures (e.g. the change it tries)")
    parser.add_argument("--covid-home", type=Path, default=CHECK_HOME / "reader" / "q")
    parser.add_argument("--litqa-home", type=Path, default=CHECK_HOME / "fulltext")
    parser.add_argument("--limit", type=int, default=100)
    args = parser.parse_args()
    for home in (args.covid_home, args.litqa_home):
        if not (home / "library.db").is_file():
            sys.exit(f"No library at {home}: run ../shared/checks/reader and ../shared/checks/fulltext first.")
    load = round(os.getloadavg()[0], 2)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    litqa = [(q["question"], q["ideal"]) for q in litqa_questions("all")][: args.limit]
    measured = {"commit": commit, "load_average_at_start": load,
                "covidqa_check": opening(args.covid_home, check_questions(args.limit), covid_stated),
                "litqa2_dev": opening(args.litqa_home, litqa, litqa_stated)}
    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results[args.label] = measured
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps({"label": args.label, "commit": commit, "load": load,
                      "covidqa_check": measured["covidqa_check"]["stated_first_400"],
                      "litqa2_dev": measured["litqa2_dev"]["stated_first_400"]}))


if __name__ == "__main__":
    main()
