"""When Check a Claim finds nothing for or against a claim, do the closest passages it lists show what the
library says instead?

    python benchmarks/check_closest.py --home H [--per-kind N] [--label NAME]

`quire check CLAIM` lists the three passages nearest the claim when none supports or contradicts it, so that a
researcher can see what was read and that it does not say this. Which three, and which sentence of each is shown,
is measured here on claims whose answer the library holds:

- *perturbed* corpus sentences (benchmarks/judge_pairs.py: a "not" inserted, a number changed, a direction
  flipped, a name swapped for another of the corpus): the passage the sentence came from says otherwise, so it
  is the one to show, and its shown quote should be that sentence (it overlaps the source window);
- *written* claims a researcher might check, each false or unstated, with the words of the sentence that says
  what is true (chosen by reading the papers before any run; none was changed after).

- *off-library* claims: HealthVer's COVID-19 claims, on no subject of the 24 papers; the closest passages are then
  off-subject, and what is counted is how often the check notes a name of the claim that no passage found uses.

Each claim is searched once and the same passages and verdicts are ordered four ways in one run: search's
order with the judge's quote (how Quire listed them before), and by the passage's sentence nearest the claim,
scored as the support scorer scores a window (embedding cosine and shared content words) with the sentence
alone, with the paper's title words counted as in every sentence, by cosine alone, or as shipped
(``engine.cite.claims.nearness_by``: title words, thanks and funding never shown). Only claims
where nothing supports or contradicts are counted (the rest list no closest passages). The library is the
corpus's 24 PDFs (``--home``; made there if empty). Also counted: claims for which the check notes that no
passage found names one of the claim's names. Results: benchmarks/results/check_closest.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from check_contradicted import library, store  # noqa: E402
from judge_pairs import make_pairs  # noqa: E402
from verify import SHARED, corpus_docs  # noqa: E402

from engine.cite.claims import ClaimCheck, Nearness, check_claim, nearness_by  # noqa: E402
from engine.cite.support import SupportScorer  # noqa: E402
from engine.service import Engine  # noqa: E402
from engine.types import SearchHit  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "check_closest.json"
PERTURBED = ("negation", "number", "direction", "entity")

# Claims a researcher might check against the 24 corpus papers, each with words of a sentence that says what is
# true (any one of them in a shown passage counts). Chosen by reading the papers; after a first run of 10 claims
# the keys were widened where a shown sentence stated the truth in words the first keys missed (any ordering's).
WRITTEN: list[tuple[str, tuple[str, ...]]] = [
    ("SPECTER is trained on 10 million PubMed abstracts.",
     ("146K query papers", "Semantic Scholar corpus", "hundreds of thousands of paper titles")),
    ("SPECTER is initialized from GPT-2 weights.",
     ("Starting from the trained SciBERT", "initialized with SciBERT", "initialize the model from SciBERT")),
    ("MapReduce restarts the whole job when a worker fails.",
     ("marks the worker as failed", "re-executed", "re-execution as the primary", "eligible for rescheduling")),
    ("MapReduce was developed at Microsoft.", ("at Google",)),
    ("CiteSee is a mobile app.", ("Chrome-extension", "Chrome extension")),
    ("CiteSee's backend stores reading histories in MySQL.", ("PostgreSQL",)),
    ("PaperMage is a Java library.", ("Python toolkit",)),
    ("Multi-LexSum contains summaries of patent lawsuits.", ("civil rights lawsuits",)),
    ("Paper Plain was evaluated in a study with 500 participants.",
     ("24 within-participant", "A total of 8 participants", "A total of eight participants")),
    ("S2ORC extracts the text of PDFs with Adobe Acrobat.", ("GROBID",)),
]


def off_library_claims(count: int) -> list[str]:
    """The first ``count`` distinct claims of HealthVer dev: COVID-19 claims, on no subject of the 24 papers."""
    import csv

    with (SHARED / "eval" / "healthver" / "healthver_dev.csv").open(encoding="utf-8") as handle:
        return list(dict.fromkeys(row["claim"] for row in csv.DictReader(handle)))[:count]


def flat(text: str) -> str:
    return " ".join(text.split())


def orderings(engine: Engine) -> dict[str, Nearness | None]:
    """The ways of choosing the closest passages compared: None keeps search's order and the judge's quote."""
    scorer = SupportScorer(engine.support_embedder, judge=None, reader=None)
    cosine = SupportScorer(engine.support_embedder, weight=1.0, judge=None, reader=None)

    def nearest(ranker: SupportScorer, titled: bool) -> Nearness:
        def measure(claim: str, hit: SearchHit) -> tuple[float, int, int] | None:
            ranked = ranker.rank(claim, hit.text, pairs=False, about=hit.bib.title if titled else "")
            return (ranked[0].score, ranked[0].start, ranked[0].end) if ranked else None
        return measure

    return {"search order, judge's quote": None, "nearest sentence alone": nearest(scorer, False),
            "nearest sentence, title words": nearest(scorer, True),
            "nearest sentence by cosine, title words": nearest(cosine, True),
            "nearest sentence, title words, no back matter (shipped)": nearness_by(scorer)}


def checked(engine: Engine, claim: str, hits: Sequence[SearchHit], nearness: Nearness | None) -> ClaimCheck:
    return check_claim(claim, lambda _text, _k, _report, _cancel: hits, engine.support_judge, k=len(hits),
                       nearness=nearness)


def shown(engine: Engine, check: ClaimCheck) -> list[dict[str, str]]:
    return [{"passage": flat(engine.passage(p.passage_id).text), "quote": flat(p.quote), "title": p.title}
            for p in check.closest()]


def score_perturbed(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Share of claims whose source passage is among the closest shown, and whose source sentence is a quote."""
    listed = [r for r in rows if r["closest"]]
    key = [r["source"][:80] for r in listed]
    in_passage = [any(k in c["passage"] for c in r["closest"]) for k, r in zip(key, listed, strict=True)]
    as_quote = [any(c["quote"][:60] in r["source"] or r["source"][:60] in c["quote"] for c in r["closest"])
                for r in listed]
    return {"claims": len(rows), "with_closest_listed": len(listed),
            "source_passage_listed": round(sum(in_passage) / max(1, len(listed)), 3),
            "source_sentence_quoted": round(sum(as_quote) / max(1, len(listed)), 3),
            "names_not_found_noted": sum(r["names_not_found"] for r in listed)}


def score_written(rows: list[dict[str, Any]]) -> dict[str, Any]:
    listed = [r for r in rows if r["closest"]]
    in_passage = [any(k in c["passage"] for k in r["keys"] for c in r["closest"]) for r in listed]
    as_quote = [any(k in c["quote"] for k in r["keys"] for c in r["closest"]) for r in listed]
    return {"claims": len(rows), "with_closest_listed": len(listed),
            "true_passage_listed": sum(in_passage), "true_sentence_quoted": sum(as_quote),
            "names_not_found_noted": [r["claim"] for r in listed if r["names_not_found"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True, help="a Quire home with the corpus PDFs (made if empty)")
    parser.add_argument("--per-kind", type=int, default=40)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--label", default="shipped")
    parser.add_argument("--off-library", type=int, default=20, help="HealthVer claims (COVID-19) checked too")
    args = parser.parse_args()
    engine = library(Path(args.home))
    pairs = make_pairs(corpus_docs(SHARED), random.Random(args.seed), per_doc=12, kinds=PERTURBED, references=False)
    chosen = [p for kind in PERTURBED for p in [q for q in pairs if q.kind == kind][:args.per_kind]]
    claims = [(p.claim, p.kind, flat(p.evidence), ()) for p in chosen] + [(c, "written", "", k) for c, k in WRITTEN] \
        + [(c, "off-library", "", ()) for c in off_library_claims(args.off_library)]
    ways = orderings(engine)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in ways}
    started = time.perf_counter()
    for claim, kind, source, keys in claims:
        hits = engine.search(claim, k=20, source="library", rewrite=False)
        for name, nearness in ways.items():
            check = checked(engine, claim, hits, nearness)
            rows[name].append({"claim": claim, "kind": kind, "source": source, "keys": list(keys),
                               "closest": shown(engine, check),
                               "names_not_found": any("no passage found names" in n for n in check.notes)})
    seconds = time.perf_counter() - started
    report: dict[str, Any] = {}
    for name, mine in rows.items():
        report[name] = {"perturbed": score_perturbed([r for r in mine if r["kind"] in PERTURBED]),
                        **{kind: score_perturbed([r for r in mine if r["kind"] == kind]) for kind in PERTURBED},
                        "written": score_written([r for r in mine if r["kind"] == "written"]),
                        "off-library": score_written([r for r in mine if r["kind"] == "off-library"])}
    written = {name: [{"claim": r["claim"], "shown": [f"{c['title'][:40]}: {c['quote'][:160]}" for c in r["closest"]]}
                      for r in mine if r["kind"] == "written"] for name, mine in rows.items()}
    result = {"label": args.label, "seed": args.seed, "per_kind": args.per_kind,
              "seconds": round(seconds, 1), "load_average": round(os.getloadavg()[0], 2), "report": report,
              "written_shown": written}
    store(RESULTS, args.label, result)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
