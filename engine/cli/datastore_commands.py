"""`quire datastore add|embed|list|remove|pack|install`: attached scholarly datastores (and, from
engine/cli/server_commands.py, `publish|connect` for server datastores)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from engine.cli import server_commands
from engine.cli.progress_bar import StageProgress
from engine.progress import CancelToken
from engine.service import Engine

SHOWN_PROBLEMS = 20
BUNDLED_NAME = "cs-sample"


def register(commands: argparse._SubParsersAction) -> None:
    datastore = commands.add_parser("datastore", help="add, list, remove, pack or install scholarly datastores")
    actions = datastore.add_subparsers(dest="datastore_command", required=True, metavar="ACTION")

    add = actions.add_parser("add", help="import a peS2o-style .jsonl or .jsonl.gz file as a datastore "
                                         "(run it again to resume an interrupted import)")
    add.add_argument("file", nargs="?", metavar="FILE")
    add.add_argument("--name", help="the datastore's name (letters, digits, '.', '_', '-')")
    add.add_argument("--demo", action="store_true", help=f"import the bundled demo datastore (as {BUNDLED_NAME!r})")
    add.add_argument("--no-embed", action="store_true", help="skip embedding: BM25 search only until "
                                                             "`quire datastore embed NAME`")
    add.add_argument("--json", action="store_true")
    add.set_defaults(handler=_add)

    embed = actions.add_parser("embed", help="embed a datastore's passages not embedded yet (resumable)")
    embed.add_argument("name", metavar="NAME")
    embed.add_argument("--json", action="store_true")
    embed.set_defaults(handler=_embed)

    listing = actions.add_parser("list", help="list the installed datastores")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=_list)

    remove = actions.add_parser("remove", help="delete a datastore and its files (or disconnect a server one)")
    remove.add_argument("name", metavar="NAME")
    remove.add_argument("--json", action="store_true")
    remove.set_defaults(handler=_remove)

    pack = actions.add_parser("pack", help="write a datastore as a verified pack (manifest, database, index)")
    pack.add_argument("name", metavar="NAME")
    pack.add_argument("out", metavar="OUT", help="the pack file to write, or a folder to write it in")
    pack.add_argument("--version", dest="pack_version", help="the pack's version (default: today's date)")
    pack.add_argument("--json", action="store_true")
    pack.set_defaults(handler=_pack)

    install = actions.add_parser("install", help="verify and install a datastore pack from a file or URL")
    install.add_argument("location", metavar="URL|FILE")
    install.add_argument("--sha256", help="the pack's published sha256, checked before installing")
    install.add_argument("--replace", action="store_true", help="replace an installed datastore of the same name")
    install.add_argument("--reembed", action="store_true",
                         help="drop the pack's vectors and embed with your configured model instead")
    install.add_argument("--no-embed", action="store_true", help="with --reembed: do not embed now")
    install.add_argument("--json", action="store_true")
    install.set_defaults(handler=_install)
    server_commands.register(actions)


def _run(action: Any, bar: StageProgress, hint: str) -> Any:
    """Run a long action; on Ctrl-C say how to resume before the CLI's own message."""
    try:
        return action()
    except KeyboardInterrupt:
        bar.clear()
        print(f"quire: stopped; {hint}", file=sys.stderr)
        raise
    finally:
        bar.clear()


def _add(engine: Engine, args: argparse.Namespace) -> int:
    if args.demo:
        from engine.datastore.bundled import bundled_datastore

        path, name = str(bundled_datastore()), args.name or BUNDLED_NAME
    elif args.file and args.name:
        path, name = args.file, args.name
    else:
        print("quire: give a FILE and --name NAME (or --demo for the bundled datastore)", file=sys.stderr)
        return 2
    bar = StageProgress(quiet=args.json)
    report = _run(lambda: engine.add_datastore(path, name, embed=not args.no_embed, progress=bar,
                                               cancel=CancelToken()),
                  bar, "run the same command again to resume where it stopped.")
    out = sys.stderr if args.json else sys.stdout
    for problem in report.problems[:SHOWN_PROBLEMS]:
        print(f"skipped {problem}", file=sys.stderr)
    if report.problem_count > SHOWN_PROBLEMS:
        print(f"... and {report.problem_count - SHOWN_PROBLEMS:,} more skipped lines (see --json)", file=sys.stderr)
    if report.ended_early:
        print(f"warning: {report.ended_early}", file=sys.stderr)
    if args.json:
        info = next((i for i in engine.datastores() if i.name == name), None)
        print(json.dumps({**report.to_json(), "datastore": info.to_json() if info else None}, indent=2))
        return 0
    if report.already_imported:
        print(f"{name}: {path} was already imported; nothing to do", file=out)
    else:
        resumed = f" (resumed after line {report.resumed_from_line:,})" if report.resumed_from_line else ""
        rate = report.words_added / report.seconds if report.seconds else 0.0
        print(f"{name}: imported {report.records_added:,} records as {report.passages_added:,} passages "
              f"({report.words_added:,} words, {rate:,.0f} words/s){resumed}; "
              f"{report.problem_count:,} lines skipped", file=out)
    return 0


def _embed(engine: Engine, args: argparse.Namespace) -> int:
    bar = StageProgress(quiet=args.json)
    started = time.perf_counter()
    added = _run(lambda: engine.embed_datastore(args.name, progress=bar, cancel=CancelToken()), bar,
                 "run the same command again to resume; finished vectors were kept.")
    seconds = time.perf_counter() - started
    if args.json:
        print(json.dumps({"name": args.name, "embedded": added, "seconds": round(seconds, 3)}))
    else:
        print(f"{args.name}: embedded {added:,} passages in {seconds:.1f} s")
    return 0


def _list(engine: Engine, args: argparse.Namespace) -> int:
    infos = engine.datastores()
    if args.json:
        print(json.dumps([info.to_json() for info in infos], indent=2))
        return 0
    if not infos:
        print("No datastores. Add one with: quire datastore add FILE --name NAME  (or --demo)")
        return 0
    for info in infos:
        if info.on_server:
            print(f"{info.name:<20} {info.records:>10,} records {info.passages:>10,} passages  on {info.location}: "
                  f"{info.state}")
            continue
        # A partial count is what a stopped or killed run kept: `quire datastore embed NAME` goes on from there.
        embedded = "not embedded" if not info.embedded else (
            "embedded" if info.embedded >= info.passages else
            f"{info.embedded:,} of {info.passages:,} embedded, resumable")
        print(f"{info.name:<20} {info.records:>10,} records {info.passages:>10,} passages  "
              f"{info.size_bytes / 2**20:>8,.1f} MiB  {embedded}{'  v' + info.version if info.version else ''}")
    return 0


def _remove(engine: Engine, args: argparse.Namespace) -> int:
    on_server = args.name in engine.datastore_registry.server_names()
    engine.remove_datastore(args.name)
    if args.json:
        print(json.dumps({"removed": args.name}))
    else:
        print(f"disconnected server datastore {args.name} (the server keeps it)" if on_server else
              f"removed datastore {args.name}")
    return 0


def _pack(engine: Engine, args: argparse.Namespace) -> int:
    bar = StageProgress(quiet=args.json)
    path, manifest = _run(lambda: engine.pack_datastore(args.name, args.out, version=args.pack_version, progress=bar,
                                                        cancel=CancelToken()), bar, "nothing was written.")
    if args.json:
        print(json.dumps({"path": str(path), "manifest": manifest.to_json()}, indent=2))
    else:
        model = manifest.embedding_model or "no vectors (BM25 only)"
        print(f"wrote {path} ({path.stat().st_size / 2**20:,.1f} MiB): {manifest.name} {manifest.version}, "
              f"{manifest.record_count:,} records, {manifest.passage_count:,} passages, {model}")
    return 0


def _install(engine: Engine, args: argparse.Namespace) -> int:
    bar = StageProgress(quiet=args.json)
    manifest = _run(lambda: engine.install_datastore(args.location, reembed=args.reembed, replace=args.replace,
                                                     sha256=args.sha256, progress=bar, cancel=CancelToken()),
                    bar, "nothing was installed; a download resumes when you run the command again.")
    embedded = 0
    if args.reembed and not args.no_embed:
        embedded = _run(lambda: engine.embed_datastore(manifest.name, progress=bar, cancel=CancelToken()), bar,
                        f"`quire datastore embed {manifest.name}` finishes the embedding.")
    if args.json:
        print(json.dumps({"installed": manifest.name, "manifest": manifest.to_json(), "embedded": embedded},
                         indent=2))
    else:
        print(f"installed {manifest.name} {manifest.version}: {manifest.record_count:,} records, "
              f"{manifest.passage_count:,} passages")
    return 0
