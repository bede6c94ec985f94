"""The MCP server's tools and resources, each a thin call of the Engine facade on one of the lanes.

Every tool has a one-line description an assistant can act on, a JSON schema from its typed arguments
(lengths and ranges bounded, so a 1 MB argument is refused before any work), a structured result
(engine/mcp/results.py) and, on bad input, the message the CLI gives for it (an EngineError's text).
Nothing here changes the library unless the server was started with ``allow_import``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

import engine
from engine.errors import Cancelled, DocumentNotFoundError, EngineError
from engine.mcp import results
from engine.mcp.lanes import Lane, Lanes
from engine.progress import CancelToken, Progress
from engine.render.exports import export_documents
from engine.request import AskRequest, RequestOptions, Scope
from engine.service import Engine
from engine.table_types import TableColumn

log = logging.getLogger(__name__)

# Bounds on what a caller may send: a question or claim is a sentence or a paragraph (the engine reads
# 1,000 characters of one); the rest bound the work one call can ask for.
MAX_TEXT = 4000
MAX_IDS = 200
MAX_K = 100
PAGE_SIZE = 50

Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
PaperIds = Annotated[list[Annotated[str, Field(min_length=1, max_length=80)]] | None,
                     Field(max_length=MAX_IDS, description="limit to these library paper ids (or unique prefixes)")]
Collection = Annotated[str | None, Field(max_length=500, description="limit to the papers filed in this collection")]
Source = Annotated[str, Field(max_length=200, description='"library", "all", "datastore" or one datastore\'s name')]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


class QuireServer:
    """The tools over one library; ``allow_import`` adds the one tool that writes."""

    def __init__(self, home: Path, *, allow_import: bool = False) -> None:
        self.lanes = Lanes(home)
        self.allow_import = allow_import
        self.mcp: MCPServer = MCPServer("quire", version=engine.__version__, instructions=(
            "Quire searches the user's own PDF library offline. Every quote comes with its paper, page and a "
            "quire:// link that opens the page in the Quire app with the quote highlighted. Answers from `ask` "
            "are checked sentence by sentence against their passages; say which sentences are not confirmed."))
        self._register()

    def close(self) -> None:
        self.lanes.close()

    # --- running engine calls ------------------------------------------------------------

    async def _call(self, lane: Lane, work: Callable[[Engine, CancelToken], Any]) -> Any:
        """Run ``work`` on ``lane``; an engine error becomes the tool error the client sees, with its message."""
        try:
            return await lane.run(work)
        except Cancelled as exc:
            raise ToolError(str(exc) or "Cancelled.") from None
        except EngineError as exc:
            raise ToolError(str(exc)) from None

    @staticmethod
    def _progress(ctx: Context) -> Callable[[str], None]:
        """A callback for the engine's thread that sends each stage as an MCP progress notification."""
        loop = asyncio.get_running_loop()
        count = [0]

        def report(message: str) -> None:
            count[0] += 1
            step = count[0]
            loop.call_soon_threadsafe(lambda: asyncio.ensure_future(ctx.report_progress(step, None, message)))

        return report

    @staticmethod
    def _doc_ids(engine_: Engine, papers: list[str] | None, collection: str | None) -> tuple[str, ...] | None:
        """The papers a scope names: the given ids, those filed in ``collection``, or both (their overlap)."""
        if collection is None:
            return tuple(papers) if papers else None
        filed = [d.id for d in engine_.documents() if collection in d.collections]
        if not filed:
            names = sorted({c for d in engine_.documents() for c in d.collections})
            raise ToolError(f"No collection is named {collection!r}; list_collections shows the "
                            f"{len(names)} there are.")
        if papers:
            wanted = {engine_.document(p).id for p in papers}
            filed = [d for d in filed if d in wanted]
        return tuple(filed)

    # --- the tools -----------------------------------------------------------------------

    def _register(self) -> None:
        tool = self.mcp.tool
        tool(description="Search the user's papers (BM25 + dense) for passages about a question; each hit has its "
                         "paper, year, page, verbatim quote, score and a quire:// link.",
             annotations=READ_ONLY)(self.search)
        tool(description="Read one passage by id (from search or ask): its full text, page, paper record and a "
                         "quire:// link that opens the page with the passage highlighted.",
             annotations=READ_ONLY)(self.get_passage)
        tool(description="Answer a question from the user's papers with citations checked sentence by sentence "
                         "(supported / partly supported / not confirmed / contradicted), references and links.",
             annotations=READ_ONLY)(self.ask)
        tool(description="Check a claim against the papers (or given passages): verdict, supporting and "
                         "contradicting passages with quotes, else the closest passages read.",
             annotations=READ_ONLY)(self.check_claim)
        tool(description="Bibliographic records of library papers as BibTeX, RIS or CSL-JSON, as Quire's exports "
                         "write them.", annotations=READ_ONLY)(self.cite)
        tool(description="List the library's papers (filter by words in title/authors, year range, collection), "
                         "a page at a time.", annotations=READ_ONLY)(self.list_papers)
        tool(description="List the library's collections (from Zotero imports) with how many papers each holds.",
             annotations=READ_ONLY)(self.list_collections)
        tool(description="A table of papers: a row per paper addressing the question, a cell per column "
                         "question, each cell backed by a verbatim quote with its page.",
             annotations=READ_ONLY)(self.paper_table)
        if self.allow_import:
            tool(description="Add PDF files or folders on this computer to the library (only when the server was "
                             "started with --allow-import).",
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))(self.import_papers)
        self.mcp.resource("quire://paper/{paper}", name="paper", mime_type="application/json",
                          description="A library paper's record: title, authors, year, pages, collections.")(
            self.paper_resource)
        self.mcp.resource("quire://paper/{paper}/page/{page}", name="page", mime_type="text/plain",
                          description="The text of one page of a library paper, as Quire extracted it.")(
            self.page_resource)

    async def search(self, question: Text, scope: Source = "library", collection: Collection = None,
                     papers: PaperIds = None, k: Annotated[int, Field(ge=1, le=MAX_K)] = 10) -> dict[str, Any]:
        def work(engine_: Engine, cancel: CancelToken) -> dict[str, Any]:
            doc_ids = self._doc_ids(engine_, papers, collection)
            hits = engine_.search(question, k=k, source=scope, doc_ids=doc_ids, cancel=cancel)
            shown: dict[str, Any] = {"hits": [results.hit_json(hit) for hit in hits]}
            if not hits and not engine_.documents():
                shown["notice"] = "The library is empty: add papers with `quire ingest` or in the Quire app."
            return shown

        return await self._call(self.lanes.quick, work)  # type: ignore[no-any-return]

    async def get_passage(self, passage_id: Annotated[str, Field(min_length=1, max_length=100)]) -> dict[str, Any]:
        def work(engine_: Engine, _: CancelToken) -> dict[str, Any]:
            try:
                passage = engine_.passage(passage_id)
            except (DocumentNotFoundError, KeyError):
                raise ToolError(f"No passage has the id {passage_id!r}; passage ids come from search and ask "
                                "results.") from None
            return results.passage_json(passage, engine_.document(passage.doc_id))

        return await self._call(self.lanes.quick, work)  # type: ignore[no-any-return]

    async def ask(self, question: Text, ctx: Context, mode: Literal["digest", "write"] = "digest",
                  scope: Source = "all", collection: Collection = None, papers: PaperIds = None) -> dict[str, Any]:
        report = self._progress(ctx)

        def work(engine_: Engine, cancel: CancelToken) -> dict[str, Any]:
            doc_ids = self._doc_ids(engine_, papers, collection)
            # Saved in the history only where the server may write to the library.
            request = AskRequest(question, scope=Scope(source=scope, doc_ids=doc_ids, label="MCP"), mode=mode,
                                 options=RequestOptions(save=self.allow_import))
            answer = engine_.ask(request, on_stage=report, cancel=cancel)
            return results.answer_json(answer)

        return await self._call(self.lanes.long, work)  # type: ignore[no-any-return]

    async def check_claim(self, claim: Text, passage_ids: Annotated[
            list[Annotated[str, Field(max_length=100)]] | None,
            Field(max_length=MAX_IDS, description="judge only these passages")] = None,
            scope: Source = "all", k: Annotated[int, Field(ge=1, le=MAX_K)] = 20) -> dict[str, Any]:
        def work(engine_: Engine, cancel: CancelToken) -> dict[str, Any]:
            if not passage_ids:
                return results.claim_json(engine_.check(claim, k=k, source=scope, cancel=cancel))
            passages = []
            for passage_id in passage_ids:
                try:
                    passages.append(engine_.passage(passage_id))
                except (DocumentNotFoundError, KeyError):
                    raise ToolError(f"No passage has the id {passage_id!r}.") from None
            verdicts = engine_.check_pairs([(claim, passage.text) for passage in passages])
            return results.pairs_json(claim, passages, verdicts)

        return await self._call(self.lanes.long, work)  # type: ignore[no-any-return]

    async def cite(self, papers: Annotated[list[Annotated[str, Field(min_length=1, max_length=80)]],
                                           Field(min_length=1, max_length=MAX_IDS)],
                   format: Literal["bibtex", "ris", "csl-json"] = "bibtex") -> dict[str, Any]:
        def work(engine_: Engine, _: CancelToken) -> dict[str, Any]:
            documents = [engine_.document(paper) for paper in papers]
            return {"format": format, "papers": [d.id for d in documents], "text": export_documents(documents, format)}

        return await self._call(self.lanes.quick, work)  # type: ignore[no-any-return]

    async def list_papers(self, words: Annotated[str | None, Field(max_length=500, description=(
            "only papers whose title or authors contain all these words"))] = None,
            collection: Collection = None, year_from: int | None = None, year_to: int | None = None,
            offset: Annotated[int, Field(ge=0)] = 0,
            limit: Annotated[int, Field(ge=1, le=200)] = PAGE_SIZE) -> dict[str, Any]:
        def work(engine_: Engine, _: CancelToken) -> dict[str, Any]:
            wanted = (words or "").lower().split()
            chosen = []
            for document in engine_.documents():
                said = " ".join((document.bib.title, *document.bib.authors)).lower()
                year = document.bib.year
                if (all(word in said for word in wanted)
                        and (collection is None or collection in document.collections)
                        and (year_from is None or (year is not None and year >= year_from))
                        and (year_to is None or (year is not None and year <= year_to))):
                    chosen.append(document)
            page = chosen[offset:offset + limit]
            more = offset + limit < len(chosen)
            return {"total": len(chosen), "offset": offset, "papers": [results.document_json(d) for d in page],
                    "next_offset": offset + limit if more else None}

        return await self._call(self.lanes.quick, work)  # type: ignore[no-any-return]

    async def list_collections(self, offset: Annotated[int, Field(ge=0)] = 0,
                               limit: Annotated[int, Field(ge=1, le=500)] = 200) -> dict[str, Any]:
        def work(engine_: Engine, _: CancelToken) -> dict[str, Any]:
            counts: dict[str, int] = {}
            for document in engine_.documents():
                for name in document.collections:
                    counts[name] = counts.get(name, 0) + 1
            names = sorted(counts)
            page = names[offset:offset + limit]
            return {"total": len(names), "offset": offset,
                    "collections": [{"name": name, "papers": counts[name]} for name in page],
                    "next_offset": offset + limit if offset + limit < len(names) else None}

        return await self._call(self.lanes.quick, work)  # type: ignore[no-any-return]

    async def paper_table(self, question: Text, ctx: Context, columns: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=500)]] | None,
            Field(max_length=12, description='column questions, each "Name=question" or a question alone')] = None,
            papers: PaperIds = None, collection: Collection = None) -> dict[str, Any]:
        report = self._progress(ctx)
        chosen = [_column(text) for text in columns] if columns else None

        def work(engine_: Engine, cancel: CancelToken) -> dict[str, Any]:
            doc_ids = self._doc_ids(engine_, papers, collection)

            def progress(step: Progress) -> None:
                report(step.label or step.stage)

            table = engine_.table(question, chosen, doc_ids=doc_ids, mode="quotes", progress=progress, cancel=cancel)
            return results.table_json(table)

        return await self._call(self.lanes.long, work)  # type: ignore[no-any-return]

    async def import_papers(self, paths: Annotated[list[Annotated[str, Field(min_length=1, max_length=4096)]],
                                                   Field(min_length=1, max_length=MAX_IDS)]) -> dict[str, Any]:
        def work(engine_: Engine, cancel: CancelToken) -> dict[str, Any]:
            done = [{"path": r.path, "outcome": str(r.outcome), "paper": r.doc_id, "reason": r.reason}
                    for r in engine_.add_documents([Path(p).expanduser() for p in paths], cancel=cancel)]
            return {"results": done}

        return await self._call(self.lanes.long, work)  # type: ignore[no-any-return]

    # --- resources -------------------------------------------------------------------------

    async def paper_resource(self, paper: str) -> dict[str, Any]:
        return await self._call(  # type: ignore[no-any-return]
            self.lanes.quick, lambda engine_, _: results.document_json(engine_.document(paper)))

    async def page_resource(self, paper: str, page: str) -> str:
        def work(engine_: Engine, _: CancelToken) -> str:
            document = engine_.document(paper)
            if not page.isdigit() or not 1 <= int(page) <= document.page_count:
                raise ToolError(f"Paper {document.id} has pages 1 to {document.page_count}; {page!r} is not one.")
            number = int(page)
            return "\n\n".join(p.text for p in engine_.passages(document.id) if number in p.pages)

        return await self._call(self.lanes.quick, work)  # type: ignore[no-any-return]


def _column(text: str) -> TableColumn:
    """``"Name=question"``, or a question alone (its own heading), as `quire table --column` reads them."""
    name, _, question = text.partition("=")
    return TableColumn(name.strip(), question.strip()) if question else TableColumn(text.strip()[:40], text.strip())
