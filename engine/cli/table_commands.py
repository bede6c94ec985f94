"""`quire table`: a table of papers, a row per paper that addresses the question and a column per question
asked of each, as Markdown, CSV or JSON."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from engine.cli.interrupt import run_cancellable
from engine.progress import CancelToken, Progress
from engine.render.paper_table import to_csv, to_markdown
from engine.service import Engine
from engine.synthesis.paper_table import default_columns
from engine.table_types import PaperRow, PaperTable, TableColumn


def register(commands: argparse._SubParsersAction) -> None:
    table = commands.add_parser("table", help="a table of papers: a row per paper that addresses the question, "
                                              "a column per question (answer, method, data, main result)")
    table.add_argument("question")
    table.add_argument("--column", action="append", metavar="NAME=QUESTION",
                       help='a column and the question its cells answer, e.g. "Sample=How many participants?" '
                            "(repeatable; replaces the default columns; NAME alone asks NAME)")
    table.add_argument("--doc", action="append", metavar="ID", help="only these papers (id or prefix; repeatable)")
    mode = table.add_mutually_exclusive_group()
    mode.add_argument("--quotes", action="store_true", help="every cell is the paper's own sentence (no model)")
    mode.add_argument("--write", action="store_true",
                      help="cells written by the model (each checked against the paper), even with a small model")
    table.add_argument("--model", metavar="PATH", help="a GGUF language model (default: settings)")
    output = table.add_mutually_exclusive_group()
    output.add_argument("--csv", action="store_true", help="print CSV: sentence, quote and page per column")
    output.add_argument("--json", action="store_true", help="print the table as JSON")
    table.set_defaults(handler=_table)


def parse_column(text: str) -> TableColumn:
    """``"Name=question"`` (or ``"Name"``, which asks the name) as a column."""
    name, _, question = text.partition("=")
    return TableColumn(name.strip(), question.strip())


def table_json(table: PaperTable) -> dict[str, Any]:
    """The table as JSON data; a row's title, authors and year are keys of the row itself, as scripts read them."""
    data = asdict(table)
    data["rows"] = [_row_json(row) for row in table.rows]
    return data


def _row_json(row: PaperRow) -> dict[str, Any]:
    return {"doc_id": row.doc_id, "title": row.bib.title, "cells": [asdict(cell) for cell in row.cells],
            "authors": list(row.bib.authors), "year": row.bib.year, "relevance": row.relevance}


def _table(engine: Engine, args: argparse.Namespace) -> int:
    columns = [parse_column(c) for c in args.column] if args.column else list(default_columns())
    doc_ids = [engine.document(d).id for d in args.doc] if args.doc else None
    cancel = CancelToken()
    def progress(report: Progress) -> None:
        if report.label:
            print(f"… {report.done + 1}/{report.total} {report.label[:70]}", file=sys.stderr, flush=True)

    table: PaperTable = run_cancellable(
        lambda: engine.table(args.question, columns, doc_ids=doc_ids, model=args.model,
                             mode="quotes" if args.quotes else "write" if args.write else "auto",
                             progress=progress, cancel=cancel),
        cancel, "quire-table", "stopping (finished rows are kept)")
    if args.csv:
        print(to_csv(table), end="")
    elif args.json:
        print(json.dumps(table_json(table), indent=2, ensure_ascii=False, default=list))
    else:
        print(to_markdown(table), end="")
    return 130 if table.cancelled else 0
