"""Does a question about funding or thanks find the paper's acknowledgements among the passages an answer reads?

    python benchmarks/back_matter_search.py [--home H ...]

For every library paper with a passage that states its funding (back matter, engine.text.back_matter, that
says "supported", "funded", "funding", "grant" or "sponsored"), two questions name the paper by its title:
"Who funded the study '<title>'?" and "Which grants supported the work in '<title>'?"; for every paper with
back matter of any kind, "Whom do the authors of '<title>' thank?". A question counts when one of those
passages is among the 12 passages search returns (what an answer reads). Both orderings of a paper's own
passages are measured in one run: by the question's words alone (before), and with the words back matter is
written in added for such questions (engine.retrieve.retriever.within_paper_query, shipped).

``--answers`` also asks each funding question through ``Engine.ask`` (digest, library only, no rewriting) and
classes what the answer opens with: the named paper's funding statement, another paper's, other back matter, or
a sentence of the science; both ways in one run: with the answer score alone (before), and with sentences of
the asked kind of back matter ranked first (engine.text.back_matter.answers_back_matter_question, shipped).

H defaults to ../shared/checks/fulltext's home (LitQA2 dev and the corpus, 66 papers); several may be given.
Results: benchmarks/results/back_matter_search.json.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opening import ASKED, CHECK_HOME  # noqa: E402

from engine.request import AskRequest, Scope  # noqa: E402
from engine.retrieve import retriever  # noqa: E402
from engine.retrieve.fts import build_fts_query  # noqa: E402
from engine.service import Engine  # noqa: E402
from engine.synthesis import evidence  # noqa: E402
from engine.text.back_matter import back_matter_flags, is_back_matter  # noqa: E402
from engine.text.sentences import split_spans  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "back_matter_search.json"
FUNDING = re.compile(r"\b(?:supported|funded|funding|grants?|sponsored|fellowships?|awards?)\b", re.IGNORECASE)
K = 12
_QUOTE = re.compile(r"“(.+?)”\s*\[", re.DOTALL)


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


def opening_kind(engine: Engine, question: str, doc_id: str, texts: dict[str, list[str]]) -> str:
    """What the digest's first quote is: this paper's funding statement, another paper's, other back matter,
    or science."""
    answer = engine.ask(AskRequest(question, scope=Scope(source="library"), mode="digest", options=ASKED))
    match = _QUOTE.search(answer.text)
    quote = " ".join(match.group(1).split()) if match else ""
    if not quote:
        return "none"
    if FUNDING.search(quote) and is_back_matter(quote):
        own = quote[:60] in " ".join(" ".join(texts[doc_id]).split())
        return "own funding" if own else "another paper's funding"
    return "other back matter" if is_back_matter(quote) else "science"


def answers(home: Path, engine: Engine) -> dict[str, Any]:
    """Each funding question's opening, without and with the back-matter rule."""
    with sqlite3.connect(home / "library.db") as db:
        texts: dict[str, list[str]] = {}
        for doc_id, text in db.execute("SELECT doc_id, text FROM passages"):
            texts.setdefault(doc_id, []).append(text)
    shipped = evidence.answers_back_matter_question
    rows = []
    for document in engine.documents():
        if not document.bib.title or not back_matter_passages(home, document.id)[1]:
            continue
        question = f"Who funded the study '{document.bib.title}'?"
        evidence.answers_back_matter_question = lambda *_: False  # before: the answer score alone
        before = opening_kind(engine, question, document.id, texts)
        evidence.answers_back_matter_question = shipped
        rows.append({"question": question, "before": before,
                     "after": opening_kind(engine, question, document.id, texts)})
        print(rows[-1], flush=True)
    kinds = ("own funding", "another paper's funding", "other back matter", "science", "none")
    return {"questions": len(rows), "before": {k: sum(r["before"] == k for r in rows) for k in kinds},
            "after": {k: sum(r["after"] == k for r in rows) for k in kinds}, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, action="append", help="a library home (repeatable)")
    parser.add_argument("--answers", action="store_true", help="also ask the funding questions (digest)")
    args = parser.parse_args()
    homes = args.home or [CHECK_HOME / "fulltext"]
    shipped = retriever.within_paper_query
    result: dict[str, Any] = {"k": K, "homes": {}}
    for home in homes:
        with Engine(home) as engine:
            asked = questions(home, engine)
            rows = []
            for question in asked:
                retriever.within_paper_query = lambda query: build_fts_query(query)  # before: its words alone
                before = found_in_top(engine, question)
                retriever.within_paper_query = shipped
                after = found_in_top(engine, question)
                rows.append({"kind": question["kind"], "question": question["question"], "before": before,
                             "after": after})
            opened = answers(home, engine) if args.answers else None
        summary = {kind: {"questions": sum(r["kind"] == kind for r in rows),
                          "found_before": sum(r["before"] for r in rows if r["kind"] == kind),
                          "found_after": sum(r["after"] for r in rows if r["kind"] == kind)}
                   for kind in ("funding", "thanks")}
        print(home.name, json.dumps(summary), flush=True)
        result["homes"][str(home)] = {"summary": summary, "rows": rows}
        if opened is not None:
            print(home.name, "openings", json.dumps({k: opened[k] for k in ("questions", "before", "after")}))
            result["homes"][str(home)]["answers"] = opened
    RESULTS.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
