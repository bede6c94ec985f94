"""Does a question about funding or thanks find the paper's acknowledgements among the passages an answer reads?

    python benchmarks/back_matter_search.py [--home H ...]

For every library paper with a passage that states its funding (back matter, engine.text.back_matter, that
says "supported", "funded", "funding", "grant" or "sponsored"), two questions name the paper by its title:
"Who funded the study '<title>'?" and "Which grants supported the work in '<title>'?"; for every paper with
back matter of any kind, "Whom do the authors of '<title>' thank?". A question counts when one of those
passages is among the 12 passages search returns (what an answer reads). Both orderings of a paper's own
passages are measured in one run: by the question's words alone (before), and with the words back matter is
written in added for such questions (engine.retrieve.retriever.within_paper_query, shipped).

H defaults to ../shared/checks/fulltext's home (LitQA2 dev and the corpus, 66 papers); several may be given.
Results: benchmarks/results/back_matter_search.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.retrieve import retriever  # noqa: E402
from engine.retrieve.fts import build_fts_query  # noqa: E402
from engine.service import Engine  # noqa: E402
from engine.text.back_matter import back_matter_flags  # noqa: E402
from engine.text.sentences import split_spans  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "back_matter_search.json"
CHECK_HOME = Path(os.environ.get("CHECK_HOME", "/tmp/quire-checks"))
FUNDING = re.compile(r"\b(?:supported|funded|funding|grants?|sponsored)\b", re.IGNORECASE)
K = 12


def back_matter_passages(home: Path, doc_id: str) -> tuple[set[str], set[str]]:
    """The paper's passages holding back matter, and those of them that state funding."""
    any_kind: set[str] = set()
    funding: set[str] = set()
    with sqlite3.connect(home / "library.db") as db:
        for passage_id, text in db.execute("SELECT id, text FROM passages WHERE doc_id = ?", (doc_id,)):
            spans = split_spans(text)
            flagged = [text[s.start:s.end] for s, flag in zip(spans, back_matter_flags(text, spans), strict=True)
                       if flag]
            if flagged:
                any_kind.add(passage_id)
                if any(FUNDING.search(sentence) for sentence in flagged):
                    funding.add(passage_id)
    return any_kind, funding


def questions(home: Path, engine: Engine) -> list[dict[str, Any]]:
    found = []
    for document in engine.documents():
        title = document.bib.title
        if not title:
            continue
        any_kind, funding = back_matter_passages(home, document.id)
        if funding:
            found.append({"kind": "funding", "question": f"Who funded the study '{title}'?", "targets": funding})
            found.append({"kind": "funding", "question": f"Which grants supported the work in '{title}'?",
                          "targets": funding})
        if any_kind:
            found.append({"kind": "thanks", "question": f"Whom do the authors of '{title}' thank?",
                          "targets": any_kind})
    return found


def found_in_top(engine: Engine, question: dict[str, Any]) -> bool:
    hits = engine.search(question["question"], k=K, source="library")
    return any(hit.passage_id in question["targets"] for hit in hits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, action="append", help="a library home (repeatable)")
    args = parser.parse_args()
    homes = args.home or [CHECK_HOME / "fulltext"]
    shipped = retriever.within_paper_query
    result: dict[str, Any] = {"k": K, "homes": {}}
    for home in homes:
        with Engine(home) as engine:
            asked = questions(home, engine)
            rows = []
            for question in asked:
                retriever.within_paper_query = build_fts_query  # before: the question's words alone
                before = found_in_top(engine, question)
                retriever.within_paper_query = shipped
                after = found_in_top(engine, question)
                rows.append({"kind": question["kind"], "question": question["question"], "before": before,
                             "after": after})
        summary = {kind: {"questions": sum(r["kind"] == kind for r in rows),
                          "found_before": sum(r["before"] for r in rows if r["kind"] == kind),
                          "found_after": sum(r["after"] for r in rows if r["kind"] == kind)}
                   for kind in ("funding", "thanks")}
        print(home.name, json.dumps(summary), flush=True)
        result["homes"][str(home)] = {"summary": summary, "rows": rows}
    RESULTS.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
