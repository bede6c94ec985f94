"""How often a "contradicted" mark is right: the support judge's red verdicts measured on labelled pairs.

    python benchmarks/contradicted.py --label NAME [--out benchmarks/results/contradicted.json] [--limit N]

A sentence is struck through in red only when a passage says otherwise, so what matters is precision:
of the pairs the judge calls ``contradicted``, the share labelled Refutes (HealthVer dev, all 1,917
pairs, claim against its evidence as a whole), and how many true sentences of the perturbation suite
(the corpus PDFs' own sentences against their own passage window, benchmarks/verify.py) are ever
called contradicted (target 0). The perturbed kinds (a "not" inserted, a number changed, a direction
flipped) show what the red mark still catches. Each run is stored under ``--label`` in the results
file beside earlier runs, so a rule change is measured before and after on the same pairs.

``--held-out checkcovid,vitaminc`` adds the judge's held-out training-side pairs of those sources
(benchmarks/judge_data.py writes them; 5 % of each source, never trained on). Their contradicted marks are
measured the same way (precision: the share labelled refutes). The judge's thresholds were fitted on these
held-out pairs (docs/history/verification.md), so they are less independent than HealthVer.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from verify import SHARED, corpus_docs, healthver, perturbation_suite  # noqa: E402

from engine.cite.judge import default_judge  # noqa: E402
from engine.cite.windows import content_words, overlap  # noqa: E402
from engine.process import prepare_process  # noqa: E402


def precision_report(gold: list[str], verdicts: list[str], positive: str,
                     shared: list[float] | None = None) -> dict[str, Any]:
    """Counts of "contradicted" verdicts per gold label, and the share of them labelled ``positive``.
    ``shared``: per pair, the share of the claim's content words the judged window has; the marks are then
    also counted as if a mark needed at least a fifth or a third of them (a rule tried, not shipped)."""
    marked = Counter(g for g, v in zip(gold, verdicts, strict=True) if v == "contradicted")
    total = sum(marked.values())
    wanted = gold.count(positive)
    report = {"pairs": len(gold), "marked_contradicted": total, "marked_by_label": dict(marked),
              "precision": round(marked[positive] / total, 3) if total else None,
              "recall": round(marked[positive] / wanted, 3) if wanted else None}
    for floor in (0.2, 0.34) if shared is not None else ():
        kept = [g for g, v, o in zip(gold, verdicts, shared or [], strict=True) if v == "contradicted" and o >= floor]
        right = sum(g == positive for g in kept)
        report[f"if_window_shares_{floor}"] = {
            "marked": len(kept), "precision": round(right / len(kept), 3) if kept else None,
            "recall": round(right / wanted, 3) if wanted else None}
    return report


def shares(items: list[tuple[str, str]], judged: list[Any]) -> list[float]:
    """The share of each claim's content words that its judged window has."""
    return [overlap(content_words(claim), content_words(j.quote)) for (claim, _), j in zip(items, judged, strict=True)]


def main() -> None:
    prepare_process()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--label", required=True, help="the name this run is stored under (e.g. the rule)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/contradicted.json")
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--limit", type=int, help="HealthVer rows to judge (default all 1,917)")
    parser.add_argument("--per-kind", type=int, default=150, help="perturbation pairs of each kind")
    parser.add_argument("--held-out", default="", help="judge_data.py sources whose held-out pairs to add")
    parser.add_argument("--judge-data", type=Path,
                        default=Path.home() / ".cache" / "quire-train" / "judge-data.jsonl.gz")
    args = parser.parse_args()
    judge = default_judge()
    rows, _ = healthver(args.shared)
    rows = rows[: args.limit] if args.limit else rows
    started = time.perf_counter()
    items = [(r["claim"], r["evidence"]) for r in rows]
    judged_rows = judge.judge_many(items, whole=True)
    report: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "load_average": round(os.getloadavg()[0], 2)},
        "healthver_dev": precision_report([r["label"] for r in rows], [j.verdict for j in judged_rows], "Refutes",
                                          shares(items, judged_rows))
                         | {"seconds": round(time.perf_counter() - started, 1)}}
    for source in filter(None, args.held_out.split(",")):
        with gzip.open(args.judge_data, "rt", encoding="utf-8") as lines:
            pairs = [row for row in map(json.loads, lines) if row["source"] == source and row["held_out"]]
        if not pairs:
            parser.error(f"--held-out: no held-out pairs of source {source!r} in {args.judge_data} "
                         "(the sources are named as benchmarks/judge_data.py names them: checkcovid, vitaminc, ...)")
        held_items = [(p["claim"], p["evidence"]) for p in pairs]
        held = judge.judge_many(held_items, whole=True)
        report[f"held_out_{source}"] = precision_report([p["label"] for p in pairs], [j.verdict for j in held],
                                                        "refutes", shares(held_items, held))
    suite = perturbation_suite(corpus_docs(args.shared), per_kind=args.per_kind)
    judged = judge.judge_many([(p.claim, p.evidence) for p in suite])
    report["perturbations"] = {
        kind: {"pairs": sum(p.kind == kind for p in suite),
               "contradicted": sum(p.kind == kind and j.verdict == "contradicted" for p, j in zip(suite, judged,
                                                                                                strict=True)),
               "supported": sum(p.kind == kind and j.supports for p, j in zip(suite, judged, strict=True))}
        for kind in sorted({p.kind for p in suite})}
    print(json.dumps(report, indent=1), flush=True)
    results = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
    results[args.label] = report
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
