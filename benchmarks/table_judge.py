"""The support judge on claims about a table cell: does it keep the true value and refuse a wrong one?

    python benchmarks/table_judge.py --label NAME [--home H]

For each question of ``tests/data/table_questions.json`` (a cell named by its row and column header,
hand-checked), the row's "table row" passage is found in the table-questions library (built by
``benchmarks/table_questions.py``; built here too on first use) and four claims are judged against it,
each made by a fixed rule:

- ``true``: "The HEADER of ROW is VALUE." against its own row: should be supported;
- ``wrong_column``: the same claim with the value of another cell of the row (a number printed in the row,
  under another header): should not be;
- ``wrong_number``: the value with its last digit changed (a number not in the row): should not be;
- ``other_row``: the true claim against another row of the same table: should not be.

Counted per kind: the share judged ``supported`` (kept). For the true claims kept, ``cell_quote`` is the
share whose quote (what a citation outlines) is the named cell alone: its header and value, not the whole
row. Results, per label, with the commit: ``benchmarks/results/table_judge.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# The engine first: it switches ONNX Runtime's telemetry off before anything imports it.
from engine.cite.judge import default_judge  # noqa: E402, I001
from engine.service import Engine  # noqa: E402
from engine.types import Passage  # noqa: E402

from table_questions import DEFAULT_HOME, QUESTIONS, SHARED, _squash, build_library  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "table_judge.json"
KINDS = ("true", "wrong_column", "wrong_number", "other_row")


def _changed(value: str) -> str:
    """The value with its last digit moved on by one: a near number, not printed in the row."""
    digits = [i for i, ch in enumerate(value) if ch.isdigit()]
    i = digits[-1]
    return value[:i] + str((int(value[i]) + 1) % 10) + value[i + 1:]


def _claim(header: str, row: str, value: str) -> str:
    return f"The {header} of {row} is {value}."


def rows_of(engine: Engine, pdf_name: str) -> list[Passage]:
    documents = [d for d in engine.documents() if Path(d.path).name == pdf_name]
    if not documents:
        return []
    return [p for p in engine.passages(documents[0].id) if p.table is not None]


def cases(engine: Engine, question: dict[str, Any]) -> list[tuple[str, str, Passage, str]]:
    """(kind, claim, passage, the cell's header-and-value text) for one question; [] when its row is not found."""
    rows = [p for p in rows_of(engine, Path(question["pdf"]).name)
            if p.table is not None and p.table.label == question["label"]]
    own = next((p for p in rows if p.table is not None and _squash(p.table.stub) == _squash(question["row"])), None)
    if own is None or own.table is None:
        return []
    header, row, value = question["header"], question["row"], question["value"]
    cell = f"{header} {value}"
    out = [("true", _claim(header, row, value), own, cell)]
    others = [c.text for c in own.table.cells[1:] if re.search(r"\d", c.text) and _squash(c.text) != _squash(value)]
    if others:
        out.append(("wrong_column", _claim(header, row, others[0]), own, cell))
    changed = _changed(value)
    if _squash(changed) not in _squash(own.text):
        out.append(("wrong_number", _claim(header, row, changed), own, cell))
    other = next((p for p in rows if p is not own and p.table is not None
                  and _squash(value) not in _squash(p.text)), None)
    if other is not None:
        out.append(("other_row", _claim(header, row, value), other, cell))
    return out


def measure(home: Path, questions: list[dict[str, Any]]) -> dict[str, Any]:
    judge = default_judge()
    rows = []
    with Engine(home) as engine:
        for question in questions:
            for kind, claim, passage, cell in cases(engine, question):
                judgement = judge.judge(claim, passage.text)
                rows.append({"kind": kind, "claim": claim, "verdict": judgement.verdict,
                             "score": judgement.score, "quote": judgement.quote, "half": question["half"],
                             "cell_quote": _squash(judgement.quote) in (_squash(cell), _squash(cell) + ",")})
    score: dict[str, Any] = {}
    for kind in KINDS:
        chosen = [r for r in rows if r["kind"] == kind]
        score[kind] = {"claims": len(chosen),
                       "kept": round(sum(r["verdict"] == "supported" for r in chosen) / max(1, len(chosen)), 3)}
    kept_true = [r for r in rows if r["kind"] == "true" and r["verdict"] == "supported"]
    score["true"]["cell_quote"] = round(sum(r["cell_quote"] for r in kept_true) / max(1, len(kept_true)), 3)
    return score | {"rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--label", required=True, help="what this run measures")
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    args = parser.parse_args()
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    build_library(args.home, sorted({SHARED / q["pdf"] for q in questions}))
    result = measure(args.home, questions)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT, check=False).stdout.strip()
    results = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    results[args.label] = {"commit": commit, **result}
    RESULTS.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=1))


if __name__ == "__main__":
    main()
