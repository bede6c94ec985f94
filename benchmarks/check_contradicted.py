"""How often Check a Claim marks a found passage "contradicted" when it does not say otherwise.

    python benchmarks/check_contradicted.py --home H [--per-kind N] [--label NAME]

`quire check CLAIM` searches the library and judges each passage found. The passages are about the claim's
subject, not chosen to support or refute it, and the judge's model reads many "same subject, another
statement" pairs as refuting ("CiteSee is a mobile app." against "The front-end of CiteSee was built on the
open-source ScholarPhi codebase.", P(refutes) 0.98). This measures it without labels to write by hand:

- *true* claims are sentences of the corpus PDFs themselves (benchmarks/verify.py's perturbation suite): a
  paper rarely contradicts its own sentence, so a passage marked contradicted for one is almost always a
  false mark. Reported: the share of claims with any contradicted passage, and marks per claim;
- *negated*, *renumbered* and *reversed* claims are those sentences with a "not" inserted, a number
  changed or a direction flipped: their own passage says otherwise, so it should be marked. Reported: the
  share whose source passage is marked contradicted, and the marks on other passages.

Each judged passage is stored with what decided it (P(refutes), the claim's content words in the quote), so
that a rule for marks can be replayed on the same run (``--replay``). The library is the corpus's 24 PDFs
(``--home`` is a Quire home holding them; made there if empty). Results: benchmarks/results/check_contradicted.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from verify import SHARED, corpus_docs, perturbation_suite  # noqa: E402

from engine.cite.judge import SAYS_OTHERWISE  # noqa: E402
from engine.cite.windows import content_words, overlap  # noqa: E402
from engine.service import Engine  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "check_contradicted.json"
KINDS = ("true", "negation", "number", "direction")
Rule = Callable[[dict[str, Any]], bool]  # whether a stored passage counts as marked contradicted


def library(home: Path) -> Engine:
    engine = Engine(home)
    if not engine.documents():
        engine.add_documents(sorted((SHARED / "corpus" / "papers").glob("*.pdf")))
    return engine


def judged(engine: Engine, claim: str, source_window: str) -> dict[str, Any]:
    """Every passage the check read, with its verdict and what decided it."""
    check = engine.check(claim, k=20, source="library")
    wanted = content_words(claim)
    key = " ".join(source_window.split())[:80]
    return {"claim": claim, "passages": [
        {"verdict": p.verdict, "refutes": round(p.contradiction, 4), "support": round(p.score, 4),
         "shares": round(overlap(wanted, content_words(p.quote)), 3), "reason": p.reason,
         "source": key in " ".join(engine.passage(p.passage_id).text.split()) if key else False}
        for p in check.passages]}


def summary(rows: list[dict[str, Any]], marked: Rule) -> dict[str, Any]:
    """Per kind: claims with a mark on another passage, marks per claim, and (perturbed) the source marked."""
    report: dict[str, Any] = {}
    for kind in KINDS:
        mine = [r for r in rows if r["kind"] == kind]
        if not mine:
            continue
        other = [[p for p in r["passages"] if marked(p) and not p["source"]] for r in mine]
        entry = {"claims": len(mine),
                 "with_a_mark_on_another_passage": round(sum(bool(o) for o in other) / len(mine), 3),
                 "marks_on_other_passages_per_claim": round(sum(len(o) for o in other) / len(mine), 2)}
        # For a true claim its own passage marked is a false mark too; for a perturbed one it is the mark wanted.
        entry["source_passage_marked"] = round(
            sum(any(marked(p) and p["source"] for p in r["passages"]) for r in mine) / len(mine), 3)
        report[kind] = entry
    return report


def shipped(passage: dict[str, Any]) -> bool:
    return passage["verdict"] == "contradicted"


def model_only_on_topic(share: float) -> Rule:
    """A rule to replay: a mark the judge's model alone made (no number, negation or direction check found
    the clash) stands only when the quote holds at least ``share`` of the claim's content words."""
    def marked(passage: dict[str, Any]) -> bool:
        if passage["verdict"] != "contradicted":
            return False
        return passage["reason"] != SAYS_OTHERWISE or passage["shares"] >= share
    return marked


def replay(rows_file: Path) -> None:
    """The stored run's marks under each rule, beside the shipped one."""
    rows = [json.loads(line) for line in rows_file.read_text(encoding="utf-8").splitlines()]
    rules = {f"model-only marks need {share:.2f} of the claim's words": model_only_on_topic(share)
             for share in (0.2, 0.34, 0.5, 0.67)}
    print(json.dumps({"shipped": summary(rows, shipped), **{name: summary(rows, rule) for name, rule in rules.items()}},
                     indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True, help="a Quire home with the corpus PDFs (made if empty)")
    parser.add_argument("--per-kind", type=int, default=40)
    parser.add_argument("--label", default="shipped")
    parser.add_argument("--rows", default=str(ROOT / "benchmarks" / "out" / "check_contradicted_rows.jsonl"))
    parser.add_argument("--replay", action="store_true", help="replay rules on the stored rows; no checking")
    args = parser.parse_args()
    if args.replay:
        replay(Path(args.rows))
        return
    engine = library(Path(args.home))
    suite = [p for p in perturbation_suite(corpus_docs(SHARED)) if p.kind in KINDS]
    chosen = [p for kind in KINDS for p in [q for q in suite if q.kind == kind][:args.per_kind]]
    started = time.perf_counter()
    rows = []
    for pair in chosen:
        rows.append({"kind": pair.kind, **judged(engine, pair.claim, pair.evidence)})
    seconds = time.perf_counter() - started
    Path(args.rows).parent.mkdir(parents=True, exist_ok=True)
    Path(args.rows).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = {"label": args.label, "seconds_per_check": round(seconds / max(1, len(rows)), 2),
              "load_average": round(os.getloadavg()[0], 2), "marks": summary(rows, shipped)}
    stored = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    stored[args.label] = result
    RESULTS.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
