"""The search commands: `search` (hybrid search over the library and datastores) and `index`
(embed the library passages not yet in the vector index; resumable)."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

from engine.cli.progress_bar import StageProgress, one_line, terminal_safe
from engine.progress import CancelToken, Progress
from engine.rerank.choose import RERANKERS
from engine.retrieve.dedupe import group_by_paper
from engine.service import Engine
from engine.types import SearchHit


def register(commands: argparse._SubParsersAction) -> None:
    search = commands.add_parser("search", help="search the library and datastores (BM25 + dense, fused)")
    search.add_argument("query", metavar="TEXT")
    search.add_argument("-k", type=int, default=10, help="how many passages (default 10)")
    search.add_argument("--source", default="all", metavar="SOURCE",
                        help="all (default), library, datastore, or one datastore's name")
    search.add_argument("--doc", action="append", metavar="ID", dest="doc_ids",
                        help="search only this document (repeatable; library ids or datastore record ids)")
    rewrite = search.add_mutually_exclusive_group()
    rewrite.add_argument("--rewrite", action="store_true", default=None,
                         help="let the language model rewrite the question into keyword queries")
    rewrite.add_argument("--no-rewrite", action="store_false", dest="rewrite", help="search with the question as is")
    search.add_argument("--rerank", metavar="NAME",
                        help=f"reranker: {', '.join(RERANKERS)} or cross-encoder:FOLDER (default: settings)")
    search.add_argument("--no-spelling", action="store_false", dest="spelling", default=None,
                        help="search the words as typed (no correction of misspelled words)")
    search.add_argument("--per-paper", type=int, default=0, metavar="N",
                        help="keep at most N passages of one paper (default: no cap)")
    search.add_argument("--json", action="store_true", help="print the hits as one ranked JSON list")
    search.set_defaults(handler=_search)

    index = commands.add_parser("index", help="embed library passages not yet in the vector index (resumable)")
    index.add_argument("--json", action="store_true")
    index.set_defaults(handler=lambda engine, args: embed_library(engine, args.json))


def hit_json(hit: SearchHit) -> dict[str, Any]:
    bib = hit.bib
    return {"passage_id": hit.passage_id, "doc_id": hit.doc_id, "source": hit.source, "title": bib.title,
            "page": hit.page, "page_end": hit.page_end, "score": round(hit.score, 6), "text": hit.text,
            "authors": list(bib.authors), "year": bib.year, "doi": bib.doi, "arxiv_id": bib.arxiv_id, "url": bib.url,
            "ranks": dict(hit.ranks)}


def _say_corrections(progress: Progress) -> None:
    """Spelling corrections go to stderr, so --json output stays one JSON list."""
    if progress.stage in ("spelling", "source"):  # a correction searched for; a broken datastore left out
        print(f"quire: {progress.label}", file=sys.stderr)


def _search(engine: Engine, args: argparse.Namespace) -> int:
    if args.k <= 0:
        print("quire: -k must be at least 1", file=sys.stderr)
        return 2
    if args.per_paper < 0:
        print("quire: --per-paper must be 0 (no cap) or more", file=sys.stderr)
        return 2
    cancel = CancelToken()
    try:
        hits = engine.search(args.query, k=args.k, source=args.source, doc_ids=args.doc_ids, rewrite=args.rewrite,
                             rerank=args.rerank, progress=_say_corrections, cancel=cancel, spelling=args.spelling,
                             per_paper=args.per_paper)
    except KeyboardInterrupt:
        cancel.cancel()
        raise
    if args.json:
        print(json.dumps([hit_json(hit) for hit in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("No passages found. Add papers with `quire ingest` or a datastore with `quire datastore add`.")
        return 0
    print_grouped(hits)
    return 0


def print_grouped(hits: list[SearchHit], width: int = 100) -> None:
    """The hits grouped by paper (best paper first); each passage keeps its rank in the whole list."""
    rank_of = {id(hit): rank for rank, hit in enumerate(hits, start=1)}
    for group in group_by_paper(hits):
        first = group[0]
        print(f"{one_line(first.bib.title or '(untitled)')}  [{first.source}]  {one_line(first.doc_id)}")
        for hit in group:
            where = "" if hit.page is None else f"p. {hit.page}  "
            print(f"  {rank_of[id(hit)]:>2}. {where}score {hit.score:.4f}")
            snippet = terminal_safe(" ".join(hit.text.split()))
            print(textwrap.indent(textwrap.fill(snippet[:400] + ("..." if len(snippet) > 400 else ""), width - 6),
                                  "      "))


def embed_library(engine: Engine, as_json: bool = False, quiet: bool = False, show_progress: bool = True) -> int:
    """Embed what is pending, with its progress (passages, rate, time left); Ctrl-C keeps what was embedded."""
    bar = StageProgress(quiet=as_json or not show_progress)
    cancel = CancelToken()

    def report(progress: Progress) -> None:
        bar(Progress("embed", progress.done, progress.total, "embedding passages for dense search"))

    try:
        added = engine.embed_pending(progress=report, cancel=cancel)
    except KeyboardInterrupt:
        cancel.cancel()
        bar.clear()
        raise
    bar.clear()
    if quiet:
        print(f"{added} passages embedded for dense search", file=sys.stderr)
    elif as_json:
        print(json.dumps({"embedded": added}))
    else:
        print(f"{added} passages embedded; dense search covers the whole library.", file=sys.stderr)
    return 0


def embed_pending_quietly(engine: Engine, show_progress: bool = True) -> None:
    """After ingest: embed for dense search with its progress (none with ``--json``); a missing model only warns
    (BM25 still works)."""
    from engine.errors import Cancelled, EngineError

    try:
        if engine.library_source.pending_count() == 0:
            return
        embed_library(engine, as_json=False, quiet=True, show_progress=show_progress)
    except Cancelled:
        raise
    except EngineError as exc:
        print(f"quire: passages are searchable by BM25; dense embedding was skipped: {exc}", file=sys.stderr)
