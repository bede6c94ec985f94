"""`quire zotero import FOLDER`: add a Zotero library's PDFs with their Zotero metadata and collections,
and `quire edit ID` to correct a paper's title, authors, year, DOI or venue."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from engine.cli.progress_bar import ProgressBar, one_line
from engine.progress import CancelToken
from engine.service import Engine


def register(commands: argparse._SubParsersAction) -> None:
    zotero = commands.add_parser("zotero", help="import the PDFs of a Zotero library (read-only)")
    actions = zotero.add_subparsers(dest="zotero_command", required=True, metavar="ACTION")
    importing = actions.add_parser("import", help="add every PDF attachment with Zotero's metadata and collections; "
                                                  "run it again to add new items and refresh changed ones")
    importing.add_argument("folder", metavar="FOLDER", help="Zotero's data folder (the one holding zotero.sqlite)")
    importing.add_argument("--json", action="store_true", help="print the report as JSON")
    importing.set_defaults(handler=_import)

    edit = commands.add_parser("edit", help="correct a paper's title, authors, year, DOI or venue")
    edit.add_argument("doc_id", metavar="ID", help="a document id or a unique prefix (see `quire library list`)")
    edit.add_argument("--title")
    edit.add_argument("--authors", help='authors separated by ";", e.g. "Arman Cohan; Sergey Feldman"')
    edit.add_argument("--year", help="four digits; an empty string clears it")
    edit.add_argument("--doi")
    edit.add_argument("--venue", help="the journal or proceedings; an empty string clears it")
    edit.set_defaults(handler=_edit)


def _import(engine: Engine, args: argparse.Namespace) -> int:
    cancel = CancelToken()
    bar = ProgressBar(sys.stderr, quiet=args.json)
    try:
        report = engine.import_zotero(args.folder, progress=bar, cancel=cancel)
    finally:
        bar.clear()
    if args.json:
        print(json.dumps({"added": report.added, "merged": report.merged, "updated": report.updated,
                          "unchanged": report.unchanged, "collections_changed": report.collections_changed,
                          "trashed": [{"item": item, "doc_id": doc_id} for item, doc_id in report.trashed],
                          "notice": report.notice,
                          "failed": [{"item": item, "reason": reason} for item, reason in report.failed],
                          "notes": [{"item": item, "note": note} for item, note in report.notes],
                          "results": [asdict(result) for result in report.results]}, indent=2, default=str))
    else:
        if report.notice:
            print(f"Note: {report.notice}", file=sys.stderr)
        print(report.summary())
        for item, reason in report.failed:
            print(f"  {one_line(item)}: {one_line(reason)}")
        for item, note in report.notes:
            print(f"  note: {one_line(item)}: {one_line(note)}")
    return 1 if report.failed and not (report.added or report.merged or report.updated or report.unchanged) else 0


def _edit(engine: Engine, args: argparse.Namespace) -> int:
    authors = [name.strip() for name in args.authors.split(";")] if args.authors is not None else None
    document = engine.update_metadata(args.doc_id, title=args.title, authors=authors, year=args.year, doi=args.doi,
                                      venue=args.venue)
    bib = document.bib
    print(f"{document.id[:12]}  {one_line(bib.title)} — {one_line(', '.join(bib.authors))} "
          f"({bib.year or 'no year'}){'  ' + one_line(bib.venue) if bib.venue else ''}"
          f"{'  doi:' + bib.doi if bib.doi else ''}")
    return 0
