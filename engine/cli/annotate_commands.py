"""`quire answer annotate ID`: an answer's quotes written into its papers as highlights."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from engine.cli.progress_bar import terminal_safe
from engine.service import Engine


def register(commands: argparse._SubParsersAction) -> None:
    answer = commands.add_parser("answer", help="do something with one past answer")
    actions = answer.add_subparsers(dest="answer_command", required=True, metavar="ACTION")
    annotate = actions.add_parser("annotate", help="save the answer's quotes as highlights in the PDFs (a copy "
                                                   "<name>.quire.pdf beside each paper unless --in-place)")
    annotate.add_argument("answer_id", metavar="ID")
    where = annotate.add_mutually_exclusive_group()
    where.add_argument("--in-place", action="store_true",
                       help="write into the papers' own PDFs (their other annotations are kept)")
    where.add_argument("--to", metavar="FOLDER", help="put the highlighted copies in this folder")
    annotate.add_argument("--json", action="store_true")
    annotate.set_defaults(handler=_annotate)


def _annotate(engine: Engine, args: argparse.Namespace) -> int:
    results = engine.annotate_answer(args.answer_id, in_place=args.in_place, folder=args.to)
    if args.json:
        print(json.dumps([asdict(result) for result in results], indent=2))
    elif not results:
        print("This answer cites no quote in a library PDF; nothing to highlight.")
    for result in results if not args.json else []:
        if result.problem:
            print(terminal_safe(f"quire: {result.problem}"), file=sys.stderr)
        else:
            again = f" ({result.already_there} already there)" if result.already_there else ""
            print(terminal_safe(f"{result.added} highlights -> {result.written}{again}"))
    return 1 if results and all(result.problem for result in results) else 0
