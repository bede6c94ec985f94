"""Table structure: are a paper's tables found, and is each cell's text in the right row and column?

The truth is ``tests/data/table_structure.json``: 60 tables on 36 pages of the shared corpus and
LitQA2 dev papers, every table on each of those pages, with 310 of their cells read off page images
(each cell as its row's name, its column's header and its text). In one run, on the same pages:

- ``quire``: Quire's ingest (``engine.ingest.parse_pdf``), its "table row" passages grouped per table;
- ``pymupdf-lines`` and ``pymupdf-text``: PyMuPDF's ``page.find_tables`` with each strategy;
- ``pdfplumber-lines`` and ``pdfplumber-text``: pdfplumber's ``page.find_tables`` with each strategy.

Found: an extracted table matches the listed table whose row names and values it holds the most
of, when it holds at least half of them; each listed table is matched at most once. Precision is
the share of extracted tables on the listed pages that match one; recall, the share of listed
tables matched. Cells right: the share of listed cells for which the matched table has a row
holding the row's name and, in the same row, the value under a column whose header holds every
word of the listed header. Texts are compared after Unicode NFKC, case folding and with spaces,
quotes and footnote marks removed (dashes and minus signs read as one).

A library's grid gets its column headers the way Quire's rows carry theirs: the rows above the
first row that states values are the header; an empty cell in an upper header row carries on the
text to its left (a spanning header). Usage:

    python benchmarks/table_structure.py [--json benchmarks/results/table_structure.json] [-v] [--only quire]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import unicodedata
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
TRUTH = ROOT / "tests" / "data" / "table_structure.json"
FOUND_SHARE = 0.5

Grid = list[list[tuple[str, str]]]  # rows of (cell text, its column's header)

_DASHES = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2010": "-", "\u2011": "-"})
_DROP = re.compile(r"[\s\"'\u201c\u201d\u2018\u2019*\u2020\u2021\u00a7]")
_WORD_DROP = re.compile(r"[^\w]")
_NUMBERISH = re.compile(r"^[(\[]?[-+~<>\u00b1]?\.?\d")


def norm(text: str | None) -> str:
    text = unicodedata.normalize("NFKC", text or "").casefold().translate(_DASHES)
    return _DROP.sub("", text)


def header_words(text: str) -> list[str]:
    words = (_WORD_DROP.sub("", norm(word)) for word in text.split())
    return [word for word in words if word]


def header_holds(header: str, wanted: str) -> bool:
    have = _WORD_DROP.sub("", norm(header))
    return all(word in have for word in header_words(wanted))


def _is_value(text: str) -> bool:
    if not _NUMBERISH.match(text):
        return False
    characters = [ch for ch in text if ch.isalnum()]
    return sum(ch.isdigit() for ch in characters) >= 0.4 * len(characters)


def grid_with_headers(cells: list[list[str | None]], names: list[str] | None = None) -> Grid:
    """A library's grid as rows of (text, header); the header rows' texts are the headers."""
    rows = [[" ".join((text or "").split()) for text in row] for row in cells]
    width = max((len(row) for row in rows), default=0)
    rows = [row + [""] * (width - len(row)) for row in rows]
    header_count = 1
    for index, row in enumerate(rows[:4]):
        values = [text for text in row[1:] if text]
        if values and sum(map(_is_value, values)) >= 0.5 * len(values):
            header_count = index
            break
    headers = list(names or [""] * width)[:width] + [""] * max(0, width - len(names or []))
    for depth, row in enumerate(rows[:header_count]):
        carried = ""
        for col, text in enumerate(row):
            if text:
                carried = text
            elif depth < header_count - 1 and col > 0:
                text = carried
            headers[col] = f"{headers[col]} {text}".strip()
    return [[(text, headers[col]) for col, text in enumerate(row)] for row in rows]


# --- the extractors: per PDF, {page: [grid, ...]} for the pages asked about ---------------------


def quire_tables(path: Path, pages: set[int]) -> dict[int, list[Grid]]:
    from engine.ingest import parse_pdf
    from engine.ingest.tables import TABLE_ROW

    parsed = parse_pdf(path)
    tables: dict[tuple[int, int], Grid] = {}
    for passage in parsed.passages:
        info = passage.table
        if passage.kind != TABLE_ROW or info is None or info.page not in pages:
            continue
        grid = tables.setdefault((info.page, info.table), [[(header, "") for header in info.headers]])
        grid.append([(cell.text, cell.header) for cell in info.cells])
    found: dict[int, list[Grid]] = defaultdict(list)
    for (page, _), grid in tables.items():
        found[page].append(grid)
    return found


def pymupdf_tables(strategy: str) -> Callable[[Path, set[int]], dict[int, list[Grid]]]:
    def extract(path: Path, pages: set[int]) -> dict[int, list[Grid]]:
        import pymupdf

        found: dict[int, list[Grid]] = defaultdict(list)
        with pymupdf.open(path) as document:
            for number in sorted(pages):
                page = document[number - 1]  # held: a table reads its header through the page
                for table in page.find_tables(strategy=strategy).tables:
                    names = list(table.header.names) if table.header.external else None
                    found[number].append(grid_with_headers(table.extract(), names))
        return found
    return extract


def pdfplumber_tables(strategy: str) -> Callable[[Path, set[int]], dict[int, list[Grid]]]:
    import pdfplumber

    settings = {"vertical_strategy": strategy, "horizontal_strategy": strategy}

    def extract(path: Path, pages: set[int]) -> dict[int, list[Grid]]:
        found: dict[int, list[Grid]] = defaultdict(list)
        with pdfplumber.open(path) as document:
            for number in sorted(pages):
                for table in document.pages[number - 1].find_tables(settings):
                    found[number].append(grid_with_headers(table.extract()))
        return found
    return extract


# --- scoring -----------------------------------------------------------------------------------


def _keys(table: dict[str, Any]) -> set[str]:
    return {norm(text) for row, _, value in table["cells"] for text in (row, value)} - {""}


def _texts(grid: Grid) -> set[str]:
    return {norm(text) for row in grid for text, _ in row} | {norm(header) for row in grid for _, header in row}


def cell_right(grid: Grid, row_name: str, header: str, value: str) -> bool:
    name, wanted = norm(row_name), norm(value)
    for row in grid:
        if not any(norm(text) == name for text, _ in row):
            continue
        if any(norm(text) == wanted and header_holds(head, header) for text, head in row):
            return True
    return False


def score(truth: list[dict[str, Any]], extracted: dict[tuple[str, int], list[Grid]]) -> dict[str, Any]:
    by_page: dict[tuple[str, int], list[int]] = defaultdict(list)
    for index, table in enumerate(truth):
        by_page[(table["pdf"], table["page"])].append(index)
    matched: dict[int, Grid] = {}
    extracted_count = hits = 0
    for page_key, indexes in by_page.items():
        grids = extracted.get(page_key, [])
        extracted_count += len(grids)
        pairs = []
        for g, grid in enumerate(grids):
            texts = _texts(grid)
            for index in indexes:
                keys = _keys(truth[index])
                share = len(keys & texts) / len(keys) if keys else 0.0
                if share >= FOUND_SHARE:
                    pairs.append((share, g, index))
        used: set[int] = set()
        for _, g, index in sorted(pairs, reverse=True):
            if g in used or index in matched:
                continue
            used.add(g)
            matched[index] = grids[g]
            hits += 1
    cells = right = 0
    per_table = []
    for index, table in enumerate(truth):
        grid = matched.get(index)
        ok = sum(cell_right(grid, *cell) for cell in table["cells"]) if grid is not None else 0
        cells += len(table["cells"])
        right += ok
        per_table.append({"pdf": table["pdf"], "page": table["page"], "label": table["label"],
                          "found": grid is not None, "cells": len(table["cells"]), "right": ok})
    return {"found_precision": round(hits / extracted_count, 3) if extracted_count else 0.0,
            "found_recall": round(len(matched) / len(truth), 3), "cells_right": round(right / cells, 3),
            "tables": len(truth), "tables_extracted": extracted_count, "tables_found": len(matched),
            "cells": cells, "cells_right_count": right, "per_table": per_table}


EXTRACTORS: dict[str, Callable[[Path, set[int]], dict[int, list[Grid]]]] = {
    "quire": quire_tables, "pymupdf-lines": pymupdf_tables("lines"), "pymupdf-text": pymupdf_tables("text"),
    "pdfplumber-lines": pdfplumber_tables("lines"), "pdfplumber-text": pdfplumber_tables("text")}


def extract_all(name: str, pages: dict[str, set[int]]) -> tuple[dict[tuple[str, int], list[Grid]], float]:
    extracted: dict[tuple[str, int], list[Grid]] = {}
    started = time.process_time()
    for pdf, numbers in pages.items():
        for number, grids in EXTRACTORS[name](SHARED / pdf, numbers).items():
            extracted[(pdf, number)] = grids
    return extracted, time.process_time() - started


def in_child(name: str, pages: dict[str, set[int]]) -> tuple[dict[tuple[str, int], list[Grid]], float]:
    """A library's tables, read in a process that never imports Quire's engine.

    The engine keeps PyMuPDF 2 from loading its layout package (``engine/__init__.py``), and
    PyMuPDF's ``find_tables`` finds fewer tables without it: each library runs as it is installed.
    ONNX Runtime's telemetry is switched off in that process's environment before it starts.
    """
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}
    done = subprocess.run([sys.executable, __file__, "--extract", name], capture_output=True, text=True,
                          env=env, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    grids = {(pdf, int(number)): [[[tuple(cell) for cell in row] for row in grid] for grid in tables]
             for pdf, number, tables in found["tables"]}
    return grids, found["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "table_structure.json")
    parser.add_argument("--extract", choices=sorted(EXTRACTORS), help=argparse.SUPPRESS)
    parser.add_argument("--only", nargs="+", choices=sorted(EXTRACTORS), help="run only these (no results file)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    truth = json.loads(TRUTH.read_text())["tables"]
    pages: dict[str, set[int]] = defaultdict(set)
    for table in truth:
        pages[table["pdf"]].add(table["page"])
    if args.extract:  # the child process of in_child: its tables as one line of JSON
        extracted, seconds = extract_all(args.extract, pages)
        print(json.dumps({"seconds": seconds, "tables": [[pdf, number, grids]
                                                         for (pdf, number), grids in extracted.items()]}))
        return
    import engine  # noqa: F401  (first: it switches off onnxruntime's telemetry before anything imports it)

    results: dict[str, Any] = {}
    for name in args.only or EXTRACTORS:
        extracted, seconds = extract_all(name, pages) if name == "quire" else in_child(name, pages)
        result = score(truth, extracted)
        result["cpu_seconds"] = round(seconds, 2)
        results[name] = result
        print(f"{name:18s} found P {result['found_precision']:.3f} R {result['found_recall']:.3f}  "
              f"cells right {result['cells_right']:.3f}  ({result['cells_right_count']}/{result['cells']}, "
              f"{seconds:.1f} s CPU)")
        if args.verbose:
            for table in result["per_table"]:
                if table["right"] < table["cells"]:
                    print(f"   {table['pdf']} p{table['page']} {table['label']}: found={table['found']} "
                          f"{table['right']}/{table['cells']}")
    if args.only:
        return
    summary = {"truth": str(TRUTH.relative_to(ROOT)), "pages": sum(len(v) for v in pages.values()),
               "pymupdf": _version("pymupdf"), "pdfplumber": _version("pdfplumber"),
               "note": "quire's CPU time is its whole ingest of each PDF (every page); the others', the listed pages",
               "extractors": results}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(summary, indent=1) + "\n")


def _version(package: str) -> str:
    from importlib.metadata import version
    return version(package)


if __name__ == "__main__":
    main()
