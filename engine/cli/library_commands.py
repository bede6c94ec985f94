"""The library commands: `ingest`, `library list|show|remove|export`, `doctor`, `demo`."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from engine.cli import export_commands, watch_commands
from engine.cli.progress_bar import ProgressBar, one_line, terminal_safe
from engine.progress import CancelToken
from engine.request import AskRequest, RequestOptions, Scope
from engine.service import Engine
from engine.types import Document, Passage


def register(commands: argparse._SubParsersAction) -> None:
    ingest = commands.add_parser("ingest", help="add PDF files or folders (recursively) to the library")
    ingest.add_argument("paths", nargs="+", metavar="PATH")
    ingest.add_argument("--password", help="password for encrypted PDFs")
    ingest.add_argument("--json", action="store_true", help="print one JSON list of per-file results")
    ingest.add_argument("--no-embed", action="store_true",
                        help="skip embedding for dense search now (BM25 works at once; `quire index` embeds later)")
    ingest.set_defaults(handler=_ingest_then_embed)

    library = commands.add_parser("library", help="list, show, remove or export documents")
    library_commands = library.add_subparsers(dest="library_command", required=True, metavar="ACTION")
    listing = library_commands.add_parser("list", help="list the documents")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=lambda engine, args: _list(engine, args.json))
    show = library_commands.add_parser("show", help="show one document (an id or a unique prefix)")
    show.add_argument("doc_id", metavar="ID")
    show.add_argument("--passages", action="store_true", help="print every passage with its pages")
    show.add_argument("--json", action="store_true")
    show.add_argument("--tables", nargs="?", const="markdown", choices=("markdown", "csv"),
                      help="print the paper's tables (Markdown, or CSV) instead")
    show.add_argument("--table", metavar="LABEL", help='with --tables: only this table ("Table 2" or "2")')
    show.set_defaults(handler=_show_command)
    remove = library_commands.add_parser("remove", help="remove a document and its passages")
    remove.add_argument("doc_id", metavar="ID")
    remove.add_argument("--json", action="store_true")
    remove.set_defaults(handler=lambda engine, args: _remove(engine, args.doc_id, args.json))
    export_commands.register(library_commands)
    watch_commands.register(library_commands)

    doctor = commands.add_parser("doctor", help="versions, data folder, models found, counts, integrity")
    doctor.add_argument("--json", action="store_true")
    doctor.set_defaults(handler=lambda engine, args: _doctor(engine, args.json))

    demo = commands.add_parser("demo", help="ingest the bundled sample papers and show what Quire extracted")
    demo.add_argument("--json", action="store_true")
    demo.set_defaults(handler=lambda engine, args: _demo(engine, args.json))


def _ingest_then_embed(engine: Engine, args: argparse.Namespace) -> int:
    code = _ingest(engine, args.paths, args.password, args.json)
    if code == 0 and not args.no_embed:
        from engine.cli.search_commands import embed_pending_quietly

        embed_pending_quietly(engine, show_progress=not args.json)
    return code


def _remove(engine: Engine, doc_id: str, as_json: bool) -> int:
    removed = engine.remove(doc_id)
    if as_json:
        print(json.dumps({"removed": removed.id, "title": removed.bib.title}))
    else:
        print(f"removed {removed.id}  {one_line(removed.bib.title or Path(removed.path).name)}")
    return 0


def _ingest(engine: Engine, paths: list[str], password: str | None, as_json: bool) -> int:
    from engine.importer import Outcome  # loads PyMuPDF: only the commands that ingest pay for it

    bar = ProgressBar(quiet=as_json)
    cancel = CancelToken()
    results = []
    try:
        for result in engine.add_documents(paths, progress=bar, cancel=cancel, password=password):
            results.append(result)
            # One line per file (a note on a second, indented): a name or title holding a newline is escaped,
            # so no file can print a line that reads like another file's result.
            name = one_line(Path(result.path).name)
            if result.outcome == Outcome.FAILED:
                line = f"failed     {name}: {one_line(result.reason or '')}"
            else:
                title = one_line(result.title or "(no title found)")
                line = f"{result.outcome.value:<10} {name}  [{result.doc_id}] {title} " \
                       f"({result.pages} pages, {result.passages} passages)"
                if result.reason:
                    line += f"\n           note: {one_line(result.reason)}"
            bar.print(line, sys.stderr if as_json else sys.stdout)
    except KeyboardInterrupt:
        cancel.cancel()
        bar.clear()
        raise
    bar.clear()
    counts = {o.value: sum(r.outcome == o for r in results) for o in Outcome}
    if as_json:
        print(json.dumps([{**asdict(r), "outcome": r.outcome.value} for r in results], indent=2))
    if not results:
        # Nothing to add is a failure too: a script that ingests a mistyped or empty folder must notice.
        print(f"quire: no PDF files found in {', '.join(one_line(p) for p in paths)}; give a PDF or a folder "
              "holding PDFs (folders are searched recursively).", file=sys.stderr)
        return 1
    summary = ", ".join(f"{n} {name}" for name, n in counts.items() if n)
    print(f"{len(results)} files: {summary}", file=sys.stderr)
    if engine.language_notice:
        print(f"note: {engine.language_notice}", file=sys.stderr)
    # Scripts must be able to tell a batch where nothing could be added from one that worked.
    return 1 if counts[Outcome.FAILED.value] == len(results) else 0


def document_json(document: Document) -> dict[str, Any]:
    bib = document.bib
    return {"id": document.id, "title": bib.title, "authors": list(bib.authors), "year": bib.year,
            "venue": bib.venue, "doi": bib.doi, "arxiv_id": bib.arxiv_id, "pages": document.page_count,
            "passages": document.passage_count, "path": document.path, "status": document.status.value,
            "error": document.error, "abstract": document.abstract, "file_size": document.file_size}


def passage_json(passage: Passage) -> dict[str, Any]:
    return {"id": passage.id, "ordinal": passage.ordinal, "pages": [passage.page_start, passage.page_end],
            "char_span": [passage.char_start, passage.char_end], "is_reference": passage.is_reference,
            "text": passage.text, "rects": [[r.page, *r.rect] for r in passage.rects]}


def _list(engine: Engine, as_json: bool) -> int:
    documents = engine.documents()
    if as_json:
        print(json.dumps([document_json(d) for d in documents], indent=2))
        return 0
    if not documents:
        print("The library is empty. Add papers with: quire ingest FOLDER_OR_PDF")
        return 0
    missing = {gone.doc_id: gone.describe() for gone in engine.missing_files()}
    for d in documents:
        bib = d.bib
        authors = ", ".join(bib.authors[:2]) + (" et al." if len(bib.authors) > 2 else "")
        title = bib.title or Path(d.path).name
        status = "" if d.status.value == "indexed" else f"  [{d.status.value}]"
        status += f"  [missing: {missing[d.id]}]" if d.id in missing else ""
        print(one_line(f"{d.id}  {title[:70]:<70}  {authors[:30]:<30} {bib.year or '':>4} {d.page_count:>4}p"
                            f"{status}"))
    return 0


def _show_command(engine: Engine, args: argparse.Namespace) -> int:
    if args.tables or args.table:
        return _show_tables(engine, args.doc_id, args.tables or "markdown", args.table)
    return _show(engine, args.doc_id, args.passages, args.json)


def _show_tables(engine: Engine, doc_id: str, style: str, wanted: str | None) -> int:
    from engine.render.tables import find_table, table_csv, table_markdown

    document = engine.document(doc_id)
    tables = engine.tables(document.id)
    if wanted:
        table = find_table(tables, wanted)
        if table is None:
            labels = ", ".join(t.label or t.title for t in tables) or "none"
            print(f"quire: no table {wanted!r} in {document.id}; its tables: {labels}.", file=sys.stderr)
            return 1
        tables = [table]
    if not tables:
        print(f"No tables were read as tables in {document.id} (their text stays searchable); "
              "papers added before tables were read need `quire ingest` again.", file=sys.stderr)
        return 0
    for index, table in enumerate(tables):
        if style == "csv":
            # One table: plain CSV. Several: each under a "# Table N (page P)" line, a blank line between.
            if len(tables) > 1:
                print(("\n" if index else "") + f"# {table.title}")
            print(table_csv(table), end="")
        else:
            print(("\n" if index else "") + table_markdown(table), end="")
    return 0


def _show(engine: Engine, doc_id: str, with_passages: bool, as_json: bool) -> int:
    document = engine.document(doc_id)
    passages = engine.passages(document.id)
    if as_json:
        data = document_json(document)
        data["passage_list"] = [passage_json(p) for p in passages] if with_passages else None
        print(json.dumps(data, indent=2))
        return 0
    for key, value in document_json(document).items():
        if value not in ("", None, []) and key != "abstract":
            print(f"{key:>10}: {one_line(', '.join(value) if isinstance(value, list) else str(value))}")
    if document.abstract:
        print(f"  abstract: {terminal_safe(document.abstract)}")
    body = sum(not p.is_reference for p in passages)
    print(f"{len(passages)} passages ({body} body, {len(passages) - body} in the reference list)")
    if with_passages:
        for p in passages:
            pages = f"p. {p.page_start}" if p.page_start == p.page_end else f"pp. {p.page_start}-{p.page_end}"
            tag = " [references]" if p.is_reference else ""
            print(f"\n--- {p.id} ({pages}, {len(p.words)} words){tag}\n{p.text}")
    return 0


def _doctor(engine: Engine, as_json: bool) -> int:
    report = engine.doctor()
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            if isinstance(value, dict):
                print(f"{key}:")
                for sub, item in value.items():
                    print(f"  {sub:<22} {item if item is not None else 'not installed'}")
            elif isinstance(value, list):
                print(f"{key}: {'none' if not value else ''}")
                for item in value:
                    print(f"  - {item}")
            else:
                print(f"{key}: {value}")
    return 1 if report["problems"] else 0


def _demo(engine: Engine, as_json: bool) -> int:
    from engine.demo import demo_papers

    papers = demo_papers()
    print(f"Quire demo: ingesting {len(papers)} bundled papers into {engine.paths.home}", file=sys.stderr)
    code = _ingest(engine, [str(p) for p in papers], None, as_json)
    if not as_json:
        print()
        _list(engine, False)
        documents = [d for d in engine.documents() if d.passage_count]
        if documents:
            first = engine.passages(documents[0].id)[0]
            print(f"\nA passage of {documents[0].bib.title!r}, page {first.page_start}, "
                  f"highlighted by {len(first.rects)} rectangles:\n  {first.text[:300]}...")
            _demo_question(engine)
    return code


DEMO_QUESTION = "How is SPECTER trained, and what data does it learn from?"


def _demo_question(engine: Engine) -> None:
    """Ask one question of the demo papers: the evidence digest, every quote verified and located."""
    from engine.cli.ask_commands import print_answer

    print(f"\nAsking the demo papers: {DEMO_QUESTION}\n", file=sys.stderr)
    print_answer(engine.ask(demo_request()))


def demo_request() -> AskRequest:
    """The demo's question as the demo asks it: the evidence digest of the library, nothing saved."""
    return AskRequest(DEMO_QUESTION, scope=Scope(source="library"), mode="digest",
                      options=RequestOptions(rewrite=False, feedback=False, save=False))


