"""A table's footnotes: are the notes printed under a table tied to it, and kept out of the running text?

The truth is ``tests/data/table_notes.json``: every table of ``tests/data/table_structure.json`` and two
more LitQA2 dev tables, each with the notes printed under it (by their opening words; most tables
have none). Each paper is ingested as Quire ingests it (``engine.ingest.parse_pdf``) and each listed
table looked up among its "table row" passages by page and label. Reported:

- notes tied: the share of listed notes found in the table's notes (or its caption, where a caption
  set under the table already holds one);
- notes in the prose: the share of listed notes whose opening words are still in a running-text passage;
- wrong notes: notes Quire ties to a listed table that match no listed note (per table found);
- tables found: listed tables Quire read as tables at all (a table kept as text has no notes to tie).

The rule was written while reading these tables, so the figures say what it does on them, not how it
carries to other papers. Usage:

    python benchmarks/table_notes.py [--json benchmarks/results/table_notes.json] [-v]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.ingest import parse_pdf  # noqa: E402
from engine.ingest.tables import TABLE_ROW  # noqa: E402

SHARED = ROOT.parent / "shared"
TRUTH = ROOT / "tests" / "data" / "table_notes.json"


def _squash(text: str) -> str:
    return " ".join(text.split()).casefold()


def measure(verbose: bool = False) -> dict[str, Any]:
    truth = json.loads(TRUTH.read_text(encoding="utf-8"))["tables"]
    parsed: dict[str, Any] = {}
    listed = tied = in_prose = wrong = found = 0
    started = time.process_time()
    for table in truth:
        if table["pdf"] not in parsed:
            parsed[table["pdf"]] = parse_pdf(SHARED / table["pdf"]).passages
        passages = parsed[table["pdf"]]
        rows = [p.table for p in passages if p.kind == TABLE_ROW and p.table is not None
                and p.table.page == table["page"] and p.table.label == table["label"]]
        prose = _squash(" ".join(p.text for p in passages if p.kind == "text"))
        notes = [_squash(note) for note in (getattr(rows[0], "notes", ()) if rows else ())]  # () before notes were read
        caption = _squash(rows[0].caption) if rows else ""
        expected = [_squash(note) for note in table["notes"]]
        listed += len(expected)
        found += bool(rows)
        hits = [any(note in mine for mine in notes) or note in caption for note in expected]
        tied += sum(hits)
        in_prose += sum(f" {note}" in f" {prose}" for note in expected)  # word-bounded: "and rfree" is no "d rfree"
        unmatched = [mine for mine in notes if not any(note in mine for note in expected)]
        wrong += len(unmatched)
        if verbose and (not all(hits) or unmatched):
            print(f"{table['pdf']} p{table['page']} {table['label']}: missed "
                  f"{[n for n, hit in zip(expected, hits, strict=True) if not hit]}, wrong {unmatched}")
    return {"tables": len(truth), "tables_found": found, "notes_listed": listed,
            "notes_tied": round(tied / max(1, listed), 3), "notes_in_prose": round(in_prose / max(1, listed), 3),
            "wrong_notes": wrong, "cpu_seconds": round(time.process_time() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every table whose notes differ")
    args = parser.parse_args()
    result = {"command": " ".join(["python benchmarks/table_notes.py", *sys.argv[1:]]), **measure(args.verbose)}
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
