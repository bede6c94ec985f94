"""`quire library export`: the whole library (or chosen papers) as BibTeX, RIS or CSL-JSON."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from engine.disk import remove_dead_temporaries, write_replacing
from engine.errors import EngineError
from engine.render.exports import FORMATS, export_documents
from engine.service import Engine


def register(library_commands: argparse._SubParsersAction) -> None:
    export = library_commands.add_parser(
        "export", help="write the library's references as BibTeX, RIS or CSL-JSON (Zotero, Mendeley, EndNote)")
    export.add_argument("doc_ids", nargs="*", metavar="ID", help="only these papers (ids or prefixes); default: all")
    export.add_argument("--format", choices=tuple(FORMATS), default="bibtex", help="default: bibtex")
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of printing")
    export.set_defaults(handler=_export)


def _export(engine: Engine, args: argparse.Namespace) -> int:
    documents = [engine.document(doc_id) for doc_id in args.doc_ids] if args.doc_ids else engine.documents()
    text = export_documents(documents, args.format)
    if not args.output:
        print(text, end="")
        return 0
    write_whole(Path(args.output).expanduser(), text)
    count = len(documents)
    print(f"Wrote {count} paper{'s' if count != 1 else ''} as {args.format} to {args.output}.", file=sys.stderr)
    return 0


def write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` all at once: a crash or a full disk leaves the old file, never half a new one."""
    try:
        # What an export killed mid-write left in the user's folder goes first; nothing else removes it.
        remove_dead_temporaries(path)
        write_replacing(path, text.encode("utf-8"), path.with_name(f".{path.name}.{os.getpid()}.tmp"))
    except OSError as exc:
        raise EngineError(f"Could not write {path} ({exc.strerror or exc}); choose another folder or free "
                          "some disk space.") from None
