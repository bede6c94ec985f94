"""Questions answered by a table cell: is the value in the digest's first 400 characters, with the cell's box cited?

    python benchmarks/table_questions.py --write           # (once) the questions, from the hand-checked cells
    python benchmarks/table_questions.py --label NAME [--home H] [--half tune|report|all]

The questions (``tests/data/table_questions.json``) are made by a fixed rule from the cells read off page
images in ``tests/data/table_structure.json`` and written before any result was looked at: per table, its
first listed cell whose value holds a digit and whose row and column header are named, then second such
cells, table by table, up to 72. Each asks for the cell by its paper, its row and its column header
(``In "TITLE", what is the HEADER of ROW?``), as a researcher names a number they saw in a paper. Papers,
not questions, are split in two halves of about as many questions (``_halves``): ``tune`` may guide
rules, ``report`` is only reported.

All the papers are ingested into one library (``--home``; built on first use, then reused), and each
question is asked as the product asks it (digest, library only, no rewriting). Counted:

- ``stated_first_400``: the cell's value (spaces and case ignored) is in the answer's first 400 characters;
- ``cell_cited``: of the answers that state it there, the share where a citation whose quote holds the value
  has boxes on the value's own page covering at least 90 % of the value's box (PyMuPDF's ``search_for``
  finds the value's occurrences on that page; the best-covered one counts);
- ``cell_and_name_alone``: of those cited, the share whose citation outlines no other word of that page than
  the value's and the row name's (not the rest of the row).

Results, per label and half, with the commit: ``benchmarks/results/table_questions.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# The engine first: it switches ONNX Runtime's telemetry off before anything imports it.
from engine.request import AskRequest, RequestOptions, Scope  # noqa: E402, I001
from engine.service import Engine  # noqa: E402
from engine.types import Answer  # noqa: E402

import pymupdf  # noqa: E402

SHARED = ROOT.parent / "shared"
CELLS = ROOT / "tests" / "data" / "table_structure.json"
QUESTIONS = ROOT / "tests" / "data" / "table_questions.json"
RESULTS = ROOT / "benchmarks" / "results" / "table_questions.json"
DEFAULT_HOME = Path(os.environ.get("CHECK_HOME", "/tmp/quire-checks")) / "table-questions"
ASKED = RequestOptions(rewrite=False, feedback=False, save=False)
MAX_QUESTIONS = 72
COVERED = 0.9


def _halves(chosen: list[dict[str, Any]]) -> dict[str, str]:
    """Each paper's half: papers in the order of a hash of their file name, each to the half with fewer
    questions so far (a paper with many tables would tip a plain hash split)."""
    counts = {"tune": 0, "report": 0}
    per_paper: dict[str, int] = {}
    for item in chosen:
        per_paper[item["pdf"]] = per_paper.get(item["pdf"], 0) + 1
    halves = {}
    for pdf in sorted(per_paper, key=lambda name: hashlib.sha1(Path(name).name.encode()).hexdigest()):
        half = min(counts, key=lambda name: (counts[name], name))
        halves[pdf] = half
        counts[half] += per_paper[pdf]
    return halves


def _eligible(cell: list[str]) -> bool:
    row, header, value = cell
    return bool(row.strip() and header.strip() and re.search(r"\d", value))


def write_questions() -> list[dict[str, Any]]:
    """The fixed rule of the module docstring, over the hand-checked cells."""
    tables = json.loads(CELLS.read_text(encoding="utf-8"))["tables"]
    titles: dict[str, str] = {}
    for table in tables:
        if table["pdf"] not in titles:
            titles[table["pdf"]] = _title(SHARED / table["pdf"])
    chosen: list[dict[str, Any]] = []
    for rank in (0, 1):
        for table in tables:
            cells = [cell for cell in table["cells"] if _eligible(cell)]
            if len(cells) > rank and len(chosen) < MAX_QUESTIONS:
                row, header, value = cells[rank]
                title = titles[table["pdf"]]
                # A paper without a title (a one-page excerpt) is not named.
                asked = f"In \u201c{title}\u201d, what is the {header} of {row}?" if title else \
                    f"What is the {header} of {row}?"
                chosen.append({"pdf": table["pdf"], "label": table["label"], "page": table["page"], "row": row,
                               "header": header, "value": value, "question": asked})
    halves = _halves(chosen)
    for item in chosen:
        item["half"] = halves[item["pdf"]]
    QUESTIONS.write_text(json.dumps({"about": __doc__.split("\n\n")[2].replace("\n", " "), "questions": chosen},
                                    indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return chosen


def _title(pdf: Path) -> str:
    """The paper's title as the library reads it, so the question names the paper as its row in Quire does."""
    from engine.ingest.pipeline import parse_pdf

    return parse_pdf(pdf).meta.bib.title


def _squash(text: str) -> str:
    return "".join(text.split()).casefold()


def cell_cited(answer: Answer, value: str, row: str, pdf: Path) -> tuple[bool, int]:
    """Whether a citation quoting ``value`` has boxes covering one occurrence of it on its page, and how many
    other words of that page the first such citation outlines (words whose centre its boxes hold, the value's
    and the row name's words aside): 0 when it outlines the cell and the row's name alone."""
    with pymupdf.open(pdf) as document:
        for sentence in answer.sentences:
            for citation in sentence.citations:
                if _squash(value) not in _squash(citation.quote) or not citation.rects:
                    continue
                for page in {r.page for r in citation.rects}:
                    if not 1 <= page <= len(document):
                        continue
                    for found in document[page - 1].search_for(value):
                        area = found.get_area()
                        if area and _covered(found, citation.rects, page) >= COVERED * area:
                            return True, _other_words(document[page - 1], citation.rects, page, f"{value} {row}")
    return False, 0


def _other_words(page: pymupdf.Page, rects: Any, number: int, named: str) -> int:
    """The page's words under the boxes (on page ``number``) that are not words of ``named``."""
    own = {_squash(word) for word in named.split()}
    boxes = [pymupdf.Rect(r.rect.x0, r.rect.y0, r.rect.x1, r.rect.y1) for r in rects if r.page == number]
    return sum(1 for x0, y0, x1, y1, text, *_ in page.get_text("words")
               if _squash(text) not in own and any(box.contains(pymupdf.Point((x0 + x1) / 2, (y0 + y1) / 2))
                                                    for box in boxes))


def _covered(found: pymupdf.Rect, rects: Any, page: int) -> float:
    """The area of ``found`` under the union of the citation's boxes on ``page`` (boxes of one quote do not
    overlap one another much; the sum is capped at the box's own area)."""
    total = 0.0
    for r in rects:
        if r.page == page:
            total += (found & pymupdf.Rect(r.rect.x0, r.rect.y0, r.rect.x1, r.rect.y1)).get_area()
    return min(total, found.get_area())


def build_library(home: Path, pdfs: list[Path]) -> None:
    with Engine(home) as engine:
        known = {Path(document.path).name for document in engine.documents()}
        missing = [pdf for pdf in pdfs if pdf.name not in known]
        if missing:
            list(engine.add_documents(missing))
        engine.embed_pending()


def measure(home: Path, questions: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    with Engine(home) as engine:
        for item in questions:
            started = time.perf_counter()
            answer = engine.ask(AskRequest(item["question"], scope=Scope(source="library"), mode="digest",
                                           options=ASKED))
            stated = _squash(item["value"]) in _squash(answer.text[:400])
            cited, others = cell_cited(answer, item["value"], item["row"], SHARED / item["pdf"]) if stated else (
                False, 0)
            rows.append({"question": item["question"], "value": item["value"], "half": item["half"],
                         "stated": stated, "cell_cited": cited, "other_words_outlined": others,
                         "first_400": answer.text[:400],
                         "seconds": round(time.perf_counter() - started, 2)})
            print(json.dumps({k: rows[-1][k] for k in ("stated", "cell_cited", "seconds", "question")},
                             ensure_ascii=False), flush=True)
    return {half: _score([r for r in rows if half == "all" or r["half"] == half]) for half in ("tune", "report", "all")
            } | {"rows": rows}


def _score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    stated = [r for r in rows if r["stated"]]
    cited = [r for r in stated if r["cell_cited"]]
    return {"questions": len(rows), "stated_first_400": round(len(stated) / max(1, len(rows)), 3),
            "cell_cited": round(len(cited) / max(1, len(stated)), 3),
            "cell_and_name_alone": round(sum(r["other_words_outlined"] == 0 for r in cited) / max(1, len(cited)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="write the questions file (done once, committed)")
    parser.add_argument("--label", help="what this run measures")
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--half", choices=("tune", "report", "all"), default="all")
    args = parser.parse_args()
    if args.write:
        chosen = write_questions()
        print(f"wrote {len(chosen)} questions to {QUESTIONS}")
        return
    if not args.label:
        parser.error("--label is required to measure")
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    build_library(args.home, sorted({SHARED / q["pdf"] for q in questions}))
    if args.half != "all":
        questions = [q for q in questions if q["half"] == args.half]
    result = measure(args.home, questions)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT, check=False).stdout.strip()
    results = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    results[args.label] = {"commit": commit, "half": args.half, **result}
    RESULTS.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=1))


if __name__ == "__main__":
    main()
