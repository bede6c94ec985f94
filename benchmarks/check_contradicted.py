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


def store(results: Path, label: str, result: dict[str, Any]) -> None:
    """Keep ``result`` under ``label`` in the results file, beside the runs kept before."""
    stored = json.loads(results.read_text(encoding="utf-8")) if results.exists() else {}
    stored[label] = result
    results.write_text(json.dumps(stored, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


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
         "shares": round(overlap(wanted, content_words(p.quote)), 3), "reason": p.reason, "doc_id": p.doc_id,
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


def not_against_its_own_support(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with a model-only mark (no check found the clash) left out where another passage of the same paper
    supports the claim: a paper seldom contradicts itself, and the six-layer model reads "same subject, another
    statement" as refuting."""
    replayed = []
    for row in rows:
        supporting = {p.get("doc_id") for p in row["passages"] if p["verdict"] == "supported"}
        passages = [dict(p, verdict="unsupported") if p["verdict"] == "contradicted" and p["reason"] == SAYS_OTHERWISE
                    and p.get("doc_id") in supporting else p for p in row["passages"]]
        replayed.append(dict(row, passages=passages))
    return replayed


def replay(rows_file: Path) -> None:
    """The stored run's marks under each rule, beside the shipped one."""
    rows = [json.loads(line) for line in rows_file.read_text(encoding="utf-8").splitlines()]
    rules = {f"model-only marks need {share:.2f} of the claim's words": model_only_on_topic(share)
             for share in (0.2, 0.34, 0.5, 0.67)}
    print(json.dumps({"shipped": summary(rows, shipped), **{name: summary(rows, rule) for name, rule in rules.items()},
                      "no model-only mark from a paper that supports the claim elsewhere":
                      summary(not_against_its_own_support(rows), shipped)}, indent=1))


# True claims a researcher might check, short and in their own words (written by reading the 24 papers; each is
# stated by one of them). Short claims are where the on-topic share lets the model's "same subject, another
# statement" through: five content words, three of them the paper's subject.
WRITTEN_TRUE = (
    "MapReduce re-executes the tasks of a failed worker.", "SPECTER is initialized with SciBERT.",
    "SPECTER uses citations as a training signal.", "S2ORC contains 81.1M papers.", "S2ORC parses PDFs with GROBID.",
    "CiteSee is a Chrome extension.", "CiteSee highlights citations to papers the user has read.",
    "PaperMage is an open-source Python toolkit.", "Multi-LexSum contains summaries of civil rights lawsuits.",
    "Paper Plain was evaluated with a usability study.",
    "LONGEVAL gives guidelines for human evaluation of faithfulness.",
    "ReVerb uses syntactic and lexical constraints to identify relation phrases.",
    "MapReduce runs on large clusters of commodity machines.", "The MapReduce master pings every worker periodically.",
    "SPECTER does not need to be fine-tuned for downstream tasks.",
    "Paper Plain provides plain language summaries of sections.",
    "S2ORC covers papers from many academic disciplines.",
    "LONGEVAL surveyed papers that evaluated summarization models.", "CiteSee was evaluated in a field study.",
    "The parallel topic model uses memcached to share state.")


def written_true(engine: Engine) -> dict[str, Any]:
    """Contradiction marks on the written true claims, with and without taking back a model-only mark from a paper
    that supports the claim elsewhere (every mark on a true claim is a false one)."""
    import engine.cite.claims as claims

    shipped_rule = claims.against_its_own_support
    report: dict[str, Any] = {}
    for name, rule in (("without the same-paper rule", list), ("with it (shipped)", shipped_rule)):
        claims.against_its_own_support = rule  # type: ignore[assignment]
        try:
            checks = [engine.check(claim, k=20, source="library") for claim in WRITTEN_TRUE]
        finally:
            claims.against_its_own_support = shipped_rule
        report[name] = {"claims": len(checks), "supported": sum(bool(c.supporting) for c in checks),
                        "with_a_contradiction_mark": sum(bool(c.contradicting) for c in checks),
                        "marks": sum(len(c.contradicting) for c in checks),
                        "marked": {c.claim: [p.shown_quote[:120] for p in c.contradicting]
                                   for c in checks if c.contradicting}}
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True, help="a Quire home with the corpus PDFs (made if empty)")
    parser.add_argument("--per-kind", type=int, default=40)
    parser.add_argument("--label", default="shipped")
    parser.add_argument("--rows", default=str(ROOT / "benchmarks" / "out" / "check_contradicted_rows.jsonl"))
    parser.add_argument("--replay", action="store_true", help="replay rules on the stored rows; no checking")
    parser.add_argument("--written", action="store_true",
                        help="the written true claims, with and without the same-paper rule, in one run")
    args = parser.parse_args()
    if args.replay:
        replay(Path(args.rows))
        return
    engine = library(Path(args.home))
    if args.written:
        result = {"label": args.label, "written_true_claims": written_true(engine)}
        store(RESULTS, args.label, result)
        print(json.dumps(result, indent=1, ensure_ascii=False))
        return
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
    store(RESULTS, args.label, result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
