"""Does a question about where a paper's code or data can be had find, and open with, the paper's statement of it?

    python benchmarks/availability_questions.py [--home H ...]

For every library paper with a sentence that says where its code, data or materials are, or that the paper
releases them (engine.text.back_matter: a statement of availability, or "We release our code ..."), one question
names the paper by its title: "Where can I get the code or data of '<title>'?". It counts as *found* when a
passage holding such a sentence is among the 12 passages search returns, and as *opened* when the digest's first
quote is such a sentence of that paper. Both orderings of a paper's own passages are measured in one run: by the
question's words alone (before), and with the words such statements are written in added
(engine.retrieve.retriever.within_paper_query, shipped).

H defaults to ../shared/checks/fulltext's home (LitQA2 dev and the corpus, 66 papers); several may be given.
Results: benchmarks/results/availability_questions.json.
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
from engine.synthesis.quotable import sentence_spans  # noqa: E402
from engine.text.artefacts import as_shown  # noqa: E402
from engine.text.back_matter import answers_back_matter_question  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "availability_questions.json"
K = 12
_QUOTE = re.compile(r"“(.+?)”\s*\[", re.DOTALL)
QUESTION = "Where can I get the code or data of '{title}'?"


def statements(home: Path, doc_id: str, question: str) -> dict[str, list[str]]:
    """The paper's passages holding a sentence that answers an availability question, with those sentences."""
    found: dict[str, list[str]] = {}
    with sqlite3.connect(home / "library.db") as db:
        for passage_id, text in db.execute("SELECT id, text FROM passages WHERE doc_id = ?", (doc_id,)):
            said = [as_shown(text[a:b]) for a, b in sentence_spans(text)
                    if answers_back_matter_question(question, text[a:b], True)]
            if said:
                found[passage_id] = said
    return found


def opening(engine: Engine, question: str) -> str:
    answer = engine.ask(AskRequest(question, scope=Scope(source="library"), mode="digest", options=ASKED))
    match = _QUOTE.search(answer.text)
    return " ".join(match.group(1).split()) if match else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, action="append", help="a library home (repeatable)")
    args = parser.parse_args()
    homes = args.home or [CHECK_HOME / "fulltext"]
    shipped = retriever.within_paper_query
    result: dict[str, Any] = {"k": K, "question": QUESTION, "homes": {}}
    for home in homes:
        rows = []
        with Engine(home) as engine:
            for document in engine.documents():
                if not document.bib.title:
                    continue
                question = QUESTION.format(title=document.bib.title)
                targets = statements(home, document.id, question)
                if not targets:
                    continue
                said = {sentence for sentences in targets.values() for sentence in sentences}
                row: dict[str, Any] = {"question": question}
                for label, query in (("before", lambda q: build_fts_query(q)), ("after", shipped)):
                    retriever.within_paper_query = query
                    hits = engine.search(question, k=K, source="library")
                    first = opening(engine, question)
                    row[label] = {"found": any(h.passage_id in targets for h in hits),
                                  "opened": any(first.startswith(s[:60]) for s in said), "opening": first[:160]}
                retriever.within_paper_query = shipped
                rows.append(row)
                print(json.dumps(row), flush=True)
        summary = {"questions": len(rows),
                   **{f"{what}_{label}": sum(r[label][what] for r in rows)
                      for what in ("found", "opened") for label in ("before", "after")}}
        print(home.name, json.dumps(summary), flush=True)
        result["homes"][str(home)] = {"summary": summary, "rows": rows}
    RESULTS.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
