"""`quire library watch add|remove|list|run` and `quire library sync [--prune]`."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from engine.cli.progress_bar import ProgressBar, terminal_safe
from engine.progress import CancelToken
from engine.service import Engine
from engine.types import Outcome
from engine.watch import SyncReport


def register(library_commands: argparse._SubParsersAction) -> None:
    watch = library_commands.add_parser("watch", help="folders whose PDFs the library follows")
    actions = watch.add_subparsers(dest="watch_command", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="watch a folder (its PDFs come in at the next sync)")
    add.add_argument("folder", metavar="FOLDER")
    add.set_defaults(handler=_add)
    remove = actions.add_parser("remove", help="stop watching a folder (its papers stay in the library)")
    remove.add_argument("folder", metavar="FOLDER")
    remove.set_defaults(handler=_remove)
    listing = actions.add_parser("list", help="the watched folders, and the papers whose files are missing")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=_list)
    run = actions.add_parser("run", help="catch up, then follow the folders' file events until Ctrl-C")
    _sync_options(run)
    run.set_defaults(handler=_run)

    sync = library_commands.add_parser("sync", help="catch up with the watched folders once")
    _sync_options(sync)
    sync.add_argument("--prune", action="store_true", help="remove the papers whose files are missing")
    sync.add_argument("--json", action="store_true", help="print what the pass did as JSON")
    sync.set_defaults(handler=_sync)


def _sync_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--settle", type=float, default=None, metavar="SECONDS",
                        help="how long a file must stay unchanged to count as complete (default 3)")
    parser.add_argument("--no-embed", action="store_true",
                        help="skip embedding for dense search (BM25 finds new papers at once)")


def _add(engine: Engine, args: argparse.Namespace) -> int:
    folder = engine.watch_folder(args.folder)
    print(terminal_safe(f"watching {folder.path}; `quire library sync` brings its PDFs in now"))
    return 0


def _remove(engine: Engine, args: argparse.Namespace) -> int:
    if not engine.unwatch_folder(args.folder):
        print(terminal_safe(f"quire: {args.folder} is not watched; `quire library watch list` shows the folders"),
              file=sys.stderr)
        return 1
    print(terminal_safe(f"no longer watching {args.folder} (its papers stay in the library)"))
    return 0


def _list(engine: Engine, args: argparse.Namespace) -> int:
    folders, missing = engine.watched_folders(), engine.missing_files()
    if args.json:
        print(json.dumps({"folders": [asdict(f) for f in folders], "missing": [asdict(m) for m in missing]},
                         indent=2))
        return 0
    if not folders:
        print("No watched folders. Add one with: quire library watch add FOLDER")
    for folder in folders:
        note = f"  [unavailable: {folder.unavailable}]" if folder.unavailable else ""
        print(terminal_safe(f"{folder.path}{note}"))
    if missing:
        print(f"\n{len(missing)} missing (their papers are kept; `quire library sync --prune` removes them):")
        for gone in missing:
            print(terminal_safe(f"  {gone.doc_id}  {gone.describe()}"))
    return 0


def _sync(engine: Engine, args: argparse.Namespace) -> int:
    if not engine.watched_folders() and not (args.prune and engine.missing_files()):
        print("quire: no watched folders; add one with: quire library watch add FOLDER", file=sys.stderr)
        return 1
    bar = ProgressBar()
    cancel = CancelToken()
    try:
        report = engine.sync_watched(prune=args.prune, settle_s=args.settle, progress=bar, cancel=cancel)
    except KeyboardInterrupt:
        cancel.cancel()
        bar.clear()
        raise
    bar.clear()
    if args.json:
        print(json.dumps(_report_json(report), indent=2))
    else:
        _print_report(report)
    _embed(engine, report, args.no_embed)
    failed = sum(result.outcome == Outcome.FAILED for result in report.results)
    return 1 if report.results and failed == len(report.results) else 0


def _run(engine: Engine, args: argparse.Namespace) -> int:
    if not engine.watched_folders():
        print("quire: no watched folders; add one with: quire library watch add FOLDER", file=sys.stderr)
        return 1
    stop = CancelToken()
    bar = ProgressBar()
    print(f"following {len(engine.watched_folders())} folders; Ctrl-C stops", file=sys.stderr)

    def on_report(report: SyncReport) -> None:
        bar.clear()
        _print_report(report, quiet=True)
        _embed(engine, report, args.no_embed)

    try:
        engine.follow_watched(stop, on_report, settle_s=args.settle, progress=bar)
    except KeyboardInterrupt:
        stop.cancel()
        bar.clear()
        print("stopped (everything stored is kept; the next run resumes)", file=sys.stderr)
        return 130
    return 0


def _embed(engine: Engine, report: SyncReport, skip: bool) -> None:
    if not skip and any(result.outcome in (Outcome.ADDED, Outcome.UPDATED) for result in report.results):
        from engine.cli.search_commands import embed_pending_quietly

        embed_pending_quietly(engine)


def _print_report(report: SyncReport, quiet: bool = False) -> None:
    for result in report.results:
        name = Path(result.path).name
        if result.outcome == Outcome.FAILED:
            line = f"failed     {name}: {result.reason} (not tried again until the file changes)"
        else:
            line = f"{result.outcome.value:<10} {name}  [{result.doc_id}] {result.title or '(no title found)'}"
        print(terminal_safe(line))
    for old, new in report.moved:
        print(terminal_safe(f"moved      {old} -> {new}"))
    for path in report.missing:
        print(terminal_safe(f"missing    {path} (the paper is kept; `quire library sync --prune` removes it)"))
    for path in report.returned:
        print(terminal_safe(f"back       {path}"))
    for path in report.pruned:
        print(terminal_safe(f"pruned     {path}"))
    for folder, why in report.unavailable:
        print(terminal_safe(f"quire: the watched folder {folder} is unavailable: {why}; nothing of it is changed "
                            "until it is back"), file=sys.stderr)
    for folder in report.available_again:
        print(terminal_safe(f"available again: {folder}"), file=sys.stderr)
    if report.waiting:
        print(f"{len(report.waiting)} files still being written; they are taken once complete", file=sys.stderr)
    if not quiet and not (report.results or report.moved or report.missing or report.returned or report.pruned):
        print("up to date", file=sys.stderr)


def _report_json(report: SyncReport) -> dict[str, object]:
    data = asdict(report)
    data["results"] = [{**asdict(result), "outcome": result.outcome.value} for result in report.results]
    return data
