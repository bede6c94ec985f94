"""`quire datastore publish|connect`: a lab's datastore on a PostgreSQL + pgvector server."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engine.cli.progress_bar import StageProgress
from engine.progress import CancelToken
from engine.service import Engine

BUNDLED_NAME = "cs-sample"


def register(actions: argparse._SubParsersAction) -> None:
    publish = actions.add_parser("publish", help="load a datastore (or a pack file) into a PostgreSQL + pgvector "
                                                 "server, for a lab to search (run it again to resume)")
    publish.add_argument("what", nargs="?", metavar="PACK", help="an installed datastore's name or a .quirepack file")
    publish.add_argument("url", metavar="URL", help="postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...] "
                                                    "(a role that may create a schema; the password is not saved)")
    publish.add_argument("--demo", action="store_true",
                         help=f"publish the bundled sample datastore (added here as {BUNDLED_NAME!r} first if needed)")
    publish.add_argument("--schema", default="quire", help="the PostgreSQL schema to write (default: quire)")
    publish.add_argument("--reader", metavar="ROLE", help="grant this read-only role SELECT on the datastore")
    publish.add_argument("--replace", action="store_true", help="replace another datastore in that schema")
    publish.add_argument("--json", action="store_true")
    publish.set_defaults(handler=_publish)

    connect = actions.add_parser("connect", help="search a datastore a PostgreSQL server holds, beside the library "
                                                 "(the question's text is sent to that server)")
    connect.add_argument("name", metavar="NAME", help="the name it is searched under here")
    connect.add_argument("url", metavar="URL", help="postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...]; "
                                                    "a password goes to a private libpq password file, not settings")
    connect.add_argument("--schema", default="quire", help="the PostgreSQL schema it was published to")
    connect.add_argument("--timeout", type=float, default=None, metavar="S",
                         help="the longest one search query may take on the server (default: 5 s)")
    connect.add_argument("--json", action="store_true")
    connect.set_defaults(handler=_connect)


def _publish(engine: Engine, args: argparse.Namespace) -> int:
    from engine.datastore.server.publish import report_line

    bar = StageProgress(quiet=args.json)
    what = args.what
    if args.demo:
        what = BUNDLED_NAME
        if BUNDLED_NAME not in [info.name for info in engine.datastores() if not info.on_server]:
            from engine.datastore.bundled import bundled_datastore

            _run(lambda: engine.add_datastore(bundled_datastore(), BUNDLED_NAME, progress=bar, cancel=CancelToken()),
                 bar)
    if not what:
        print("quire: give an installed datastore's name or a pack file (or --demo)", file=sys.stderr)
        return 2
    report = _run(lambda: engine.publish_datastore(what, args.url, schema=args.schema, reader=args.reader,
                                                   replace=args.replace, progress=bar, cancel=CancelToken()), bar)
    if args.json:
        print(json.dumps(report.__dict__, indent=2))
    else:
        print(report_line(report))
    return 0


def _connect(engine: Engine, args: argparse.Namespace) -> int:
    info = engine.connect_datastore(args.name, args.url, schema=args.schema, timeout_s=args.timeout)
    if args.json:
        print(json.dumps(info.to_json(), indent=2))
    else:
        print(f"connected {info.name}: {info.records:,} records, {info.passages:,} passages at {info.location} "
              f"(embedded by {info.embedding_model or 'no model: BM25 only'}).\nQuestions searched with "
              "datastores are now sent to that server, and nowhere else.")
    return 0


def _run(action: Any, bar: StageProgress) -> Any:
    try:
        return action()
    except KeyboardInterrupt:
        bar.clear()
        print("quire: stopped; run the same command again to resume where it stopped.", file=sys.stderr)
        raise
    finally:
        bar.clear()
