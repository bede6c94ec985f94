"""The Engine facade: the one API the CLI, the tests and the desktop UI use.

It owns the library catalog and the settings; every long call takes a progress callback and a
cancel token. Nothing here imports Qt. Settings, models, hardware and health are the facade's
setup methods (engine/service_setup.py), watched folders and datastores its watching and datastore
methods (service_watch.py, service_datastores.py); the work of answering, searching and tables is
in service_ask, service_search and service_table, which get what they use, never the Engine.
"""

from __future__ import annotations

from collections.abc import Collection, Generator, Iterable, Iterator, Sequence
from contextlib import suppress
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.config import Paths, Settings, ensure_home, read_settings, resolve_paths
from engine.errors import EngineError
from engine.generate.slot import LanguageModelSlot
from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.request import AskRequest
from engine.service_datastores import EngineDatastores
from engine.service_setup import EngineSetup
from engine.service_watch import EngineWatch
from engine.store import Library
from engine.table_types import PaperRow, PaperTable, TableColumn
from engine.types import LIBRARY_SOURCE, Answer, Document, Page, Passage, SearchHit

if TYPE_CHECKING:
    from collections.abc import Callable

    from engine.cite.claims import CheckedPassage, ClaimCheck, PairVerdict
    from engine.cite.judge import SupportJudge
    from engine.embed import Embedder, EmbeddingCache
    from engine.importer import IngestResult
    from engine.render.highlights import AnnotatedPaper
    from engine.render.tables import DocumentTable
    from engine.retrieve.library_source import LibrarySource
    from engine.service_ask import AnswerTools
    from engine.service_search import Search, SearchTools
    from engine.store.answers import AnswerSummary
    from engine.synthesis.support_reader import SupportReader
    from engine.zotero import ZoteroReport


class Engine(EngineSetup, EngineWatch, EngineDatastores):
    """One library (a home folder) with its settings."""

    def __init__(self, home: str | Path | None = None, settings: Settings | None = None) -> None:
        self.paths: Paths = resolve_paths(home)
        ensure_home(self.paths.home)
        # Set when the settings file could not be read and was set aside: for a program to tell the user.
        self.settings_notice = ""
        # Set when ingest switched the library to the multilingual embedder: for a program to tell the user.
        self.language_notice = ""
        if settings is None:
            settings, self.settings_notice = read_settings(self.paths.config_file)
        self.settings = settings
        self.library = Library(self.paths.catalog)
        self.language_models = LanguageModelSlot()  # the one loaded language model (Engine.language_model)

    def close(self) -> None:
        if "datastore_registry" in self.__dict__:
            self.datastore_registry.close()
        if "library_source" in self.__dict__:
            self.library_source.close()
        if "embedding_cache" in self.__dict__:
            self.embedding_cache.close()
        if "watch_state" in self.__dict__:
            self.watch_state.close()
        self.language_models.close()
        self.library.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- library -------------------------------------------------------------------------

    def add_documents(self, paths: Iterable[str | Path], progress: ProgressCallback = no_progress,
                      cancel: CancelToken | None = None, password: str | None = None) -> Iterator[IngestResult]:
        """Ingest PDFs (files or folders, recursively); yields each file's result when it is stored."""
        ingest = self.settings.ingest
        # Imported here: PyMuPDF takes a second to import, and commands that do not ingest skip it.
        from engine.importer import Importer
        from engine.ingest.pipeline import IngestOptions

        options = IngestOptions(passage_words=ingest.passage_words, password=password, ocr=ingest.ocr,
                                ocr_language=ingest.ocr_language)
        return self._filled(Importer(self.library, options).add(paths, progress, cancel))

    def _filled(self, results: Iterator[IngestResult]) -> Iterator[IngestResult]:
        """Pass each result on once a datastore record of the same paper has filled what its PDF lacked."""
        from engine.datastore.fill import fill_from_datastores
        from engine.importer import Outcome

        try:
            added = False
            for result in results:
                if result.doc_id and result.outcome in (Outcome.ADDED, Outcome.UPDATED):
                    fill_from_datastores(self.library, self.datastore_registry, [result.doc_id])
                    added = True
                yield result
            if added:
                self._switch_if_multilingual()
        finally:
            if isinstance(results, Generator):
                results.close()  # a consumer that stops early stops the parse workers now, not at collection

    def documents(self) -> list[Document]:
        return self.library.documents()

    def document(self, doc_id: str) -> Document:
        return self.library.document(doc_id)

    def library_version(self) -> tuple[int, int]:
        """Changes whenever the library (its papers, details or answers) changes, by this engine or any other
        process (the CLI, the MCP server, a watched folder): poll it and re-read when it differs."""
        return self.library.version()

    def pages(self, doc_id: str) -> list[Page]:
        return self.library.pages(self.library.document(doc_id).id)

    def passages(self, doc_id: str) -> list[Passage]:
        return self.library.passages(self.library.document(doc_id).id)

    def passage(self, passage_id: str) -> Passage:
        return self.library.passage(passage_id)

    def tables(self, doc_id: str) -> list[DocumentTable]:
        """The paper's own tables, rebuilt from its stored table rows (none read: an empty list)."""
        from engine.render.tables import document_tables

        return document_tables(self.passages(doc_id))

    def figure_images(self, answer: Answer, max_width: int = 320) -> dict[str, bytes]:
        """PNG pictures of the figures ``answer`` cites, by caption passage id (for the answer view and exports)."""
        from engine.render.figures import figure_images

        return figure_images(answer, self.library, max_width)

    def document_at(self, path: str | Path) -> Document | None:
        """The paper the file at ``path`` holds, or None when that file is not in the library."""
        record = self.library.file_record(str(Path(path).resolve()))
        return self.library.document(record.doc_id) if record is not None else None

    def remove(self, doc_id: str) -> Document:
        return self.library.remove_document(self.library.document(doc_id).id)

    def update_metadata(self, doc_id: str, *, title: str | None = None, authors: Sequence[str] | None = None,
                        year: int | str | None = None, doi: str | None = None,
                        venue: str | None = None) -> Document:
        """Correct a paper's title, authors, year, DOI or venue (None leaves a field as it is); references,
        exports and search use the corrected values, and re-reading the PDF or importing again keeps them."""
        from engine.store.edits import update_metadata

        return update_metadata(self.library, doc_id, title=title, authors=authors, year=year, doi=doi, venue=venue)

    def collections(self, doc_id: str) -> list[str]:
        """The collections a paper is filed in (from a Zotero import), sorted."""
        from engine.store.edits import collections_of

        return collections_of(self.library, self.library.document(doc_id).id)

    def import_zotero(self, folder: str | Path, progress: ProgressCallback = no_progress,
                      cancel: CancelToken | None = None) -> ZoteroReport:
        """Add the PDFs of a Zotero data folder with Zotero's metadata and collections (read-only; a
        re-import adds what is new and refreshes what changed in Zotero)."""
        from engine.zotero import import_zotero, zotero_database

        report = import_zotero(self.library, lambda paths: self.add_documents(paths, progress, cancel),
                               Path(folder), progress, cancel)
        # Papers of items in Zotero's trash are shown as missing, as deleted watched files are (sync --prune).
        self.watch_state.set_zotero_trashed(str(zotero_database(Path(folder)).resolve()), report.trashed)
        return report

    # --- search ----------------------------------------------------------------------------

    @cached_property
    def embedder(self) -> Embedder:
        """The one embedder of this engine: settings.retrieval.embedder, or the bundled all-MiniLM-L6-v2.

        ``multilingual-e5-small`` names the multilingual model (docs/languages.md); anything else
        is a sentence-transformers folder.
        """
        from engine.embed import SentenceTransformerEmbedder
        from engine.embed.e5 import MULTILINGUAL_EMBEDDER, MultilingualE5Embedder

        if self.settings.retrieval.embedder == MULTILINGUAL_EMBEDDER:
            return MultilingualE5Embedder()
        return SentenceTransformerEmbedder(self.settings.retrieval.embedder or None,
                                           quantize=self.settings.retrieval.embedder_int8)

    @cached_property
    def support_embedder(self) -> Embedder:
        """The embedder citation support is judged with: the search embedder at full precision.

        The support thresholds were fitted on fp32 cosines; int8 vectors lowered the scorer's
        precision on the labelled pairs (0.957 -> 0.935), and a kept citation must be real. It remembers the
        vectors of the sentences it embedded last, for the next answer or table that reads them again.
        """
        from engine.embed import SentenceTransformerEmbedder
        from engine.embed.e5 import MultilingualE5Embedder
        from engine.embed.remembering import RememberingEmbedder

        search = self.embedder
        if isinstance(search, MultilingualE5Embedder):
            # The support thresholds are all-MiniLM-L6-v2's cosines: the bundled model judges, whichever searches.
            search = SentenceTransformerEmbedder(None, quantize=True)
        full_precision = getattr(search, "full_precision", None)
        return RememberingEmbedder(full_precision() if callable(full_precision) else search)

    @cached_property
    def embedding_cache(self) -> EmbeddingCache:
        """The library's vectors by (model, content hash): re-ingesting unchanged text never re-embeds."""
        from engine.embed import EmbeddingCache

        return EmbeddingCache(self.paths.home / "embeddings.db")

    @cached_property
    def library_source(self) -> LibrarySource:
        """The library as a search source (BM25 at once, dense over what is embedded so far)."""
        from engine.retrieve.library_source import LibrarySource

        return LibrarySource(self.paths.catalog, self.paths.home / "vectors" / "library.index",
                             self.embedding_cache, self.embedder)

    def search(self, query: str, k: int = 10, source: str = "all", doc_ids: Collection[str] | None = None,
               rewrite: bool | None = None, rerank: str | None = None, progress: ProgressCallback = no_progress,
               cancel: CancelToken | None = None, spelling: bool | None = None,
               per_paper: int = 0, lexical_only: bool = False) -> list[SearchHit]:
        """Hybrid search over the library and the datastores (``source``: "all", "library", "datastore"
        or one datastore's name); ``doc_ids`` limits it to those documents; ``rewrite``/``rerank``/
        ``spelling`` override the settings for this call. ``per_paper`` > 0 keeps at most that many
        passages of one paper (`quire search --per-paper`); a search list is not capped, and answers
        apply their own measured cap (engine.tuning.SYNTHESIS.per_paper). ``lexical_only``: BM25 alone
        (retrieval while writing searches so)."""
        return self.searcher()(query, k, source, doc_ids, rewrite, rerank, progress, cancel, spelling, per_paper,
                                lexical_only)

    def searcher(self) -> Search:
        """Search as a callable of its own, under the current settings: what answers and tables are handed."""
        from engine.service_search import Search

        return Search(self.search_tools())

    def search_tools(self) -> SearchTools:
        """What search uses from this engine (models stay unloaded until a search needs them)."""
        from engine.service_search import SearchTools

        # Looked up at call time: the datastores folder is read only when a search reaches it, and an embedder
        # swapped in later (a test's fake) is the one used.
        return SearchTools(settings=self.settings, models_dir=self.paths.models, library=self.library_source,
                           datastores=self.datastore_sources, embedder=lambda: self.embedder,
                           language_model=self.language_model_loader())

    def doctor(self) -> dict[str, Any]:
        """As :meth:`EngineSetup.doctor`, with how many library passages have a vector kept (in the index or,
        after a stopped or killed `quire index`, only in the cache: the next run starts from there)."""
        report = super().doctor()
        # No embedder to count with, or no room to open its cache: the report's problems say which.
        with suppress(EngineError):
            report["counts"]["passages_embedded"] = self.library_source.embedded_count()
        return report

    def embed_pending(self, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> int:
        """Embed the library passages not yet in the vector index (resumable, cancellable); returns how many."""
        return self.library_source.embed_pending(progress, cancel)

    # --- answers ---------------------------------------------------------------------------

    def ask(self, request: AskRequest | str, *, on_token: Callable[[str], None] | None = None,
            on_stage: Callable[[str], None] | None = None, cancel: CancelToken | None = None) -> Answer:
        """Answer a question (an :class:`AskRequest`, or just its text) from the library and datastores with
        verified citations, and save it in the history unless the request says not to.

        A request that cannot be answered as asked raises AskRequestError before any work. ``on_stage``
        hears "retrieving", "reranking", "judging", "drafting", "revising", "verifying" (and "also
        searching for ..." when a misspelled question word was corrected); ``on_token`` gets the draft
        as it streams; ``cancel`` stops between tokens (the partial answer is kept and marked cancelled).
        """
        from engine.service_ask import answer_request

        asked = AskRequest(request) if isinstance(request, str) else request
        return answer_request(asked, self._answer_tools(), on_token=on_token, on_stage=on_stage, cancel=cancel)

    def _answer_tools(self) -> AnswerTools:
        """What answering uses from this engine; the models load only when the answer needs them."""
        from engine.service_ask import AnswerTools

        # The support embedder stays a look-up made when it is needed: a request refused before any work
        # loads no model.
        return AnswerTools(settings=self.settings, library=self.library, search=self.searcher(),
                           datastore_names=self.datastore_registry.names, language_model=self.language_model_loader(),
                           support_embedder=lambda: self.support_embedder)

    def table(self, question: str, columns: Sequence[TableColumn] | None = None, *,
              doc_ids: Collection[str] | None = None, mode: str = "auto", model: str | Path | None = None,
              on_row: Callable[[PaperRow], None] | None = None, progress: ProgressCallback = no_progress,
              cancel: CancelToken | None = None) -> PaperTable:
        """A table of papers: a row per paper in scope (``doc_ids``, else the library) that addresses
        ``question``, a cell per column (default: answer, method, data, main result), each a sentence
        backed by a verbatim quote or "not stated". ``mode``: "auto" writes cells with a model able to,
        "write" always, "quotes" never. ``on_row`` hears each finished row; ``cancel`` keeps them."""
        from engine.service_table import TableTools, engine_table

        tools = TableTools(settings=self.settings, library=self.library, search=self.searcher(),
                           language_model=self.language_model_loader(),
                           support_embedder=lambda: self.support_embedder)
        return engine_table(tools, question, columns, doc_ids=doc_ids, mode=mode, model=model, on_row=on_row,
                            progress=progress, cancel=cancel)

    def answers(self, limit: int = 200) -> list[AnswerSummary]:
        """Past answers, newest first."""
        from engine.store.answers import list_answers

        return list_answers(self.library, limit)

    def answer(self, answer_id: str) -> Answer:
        """A past answer by id (or unique id prefix)."""
        from engine.store.answers import load_answer

        return load_answer(self.library, answer_id)

    def annotate_answer(self, answer_id: str, *, in_place: bool = False,
                        folder: str | Path | None = None) -> list[AnnotatedPaper]:
        """Write a past answer's quotes into its papers as highlights: into ``<name>.quire.pdf`` beside each
        paper (or in ``folder``), or into the PDFs themselves with ``in_place``; annotating again adds only
        what is not there yet."""
        from engine.render.highlights import annotate_answer

        def pdf_of(doc_id: str) -> str:
            paths = self.library.file_paths(doc_id)
            present = [path for path in paths if Path(path).is_file()]
            return (present or paths or [self.library.document(doc_id).path])[0]

        return annotate_answer(self.answer(answer_id), pdf_of, in_place=in_place,
                               folder=Path(folder).expanduser() if folder is not None else None)

    def delete_answer(self, answer_id: str) -> None:
        from engine.store.answers import delete_answer

        delete_answer(self.library, answer_id)

    # --- checking claims --------------------------------------------------------------------

    @cached_property
    def support_judge(self) -> SupportJudge:
        """The judge citations and claims are checked with: the shipped entailment model and the number /
        negation / direction checks (engine/cite/judge.py)."""
        from engine.cite.judge import default_judge

        return default_judge()

    def check(self, claim: str, *, k: int = 20, source: str = "all", doc_ids: Collection[str] | None = None,
              progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> ClaimCheck:
        """Search the library and datastores for ``claim`` and judge each passage found: the result lists
        supporting passages first, then contradicting ones, each with its verdict and verbatim quote, then the
        rest, nearest the claim first, each with its sentence nearest the claim.
        Raises ClaimError for an empty claim; a very long claim is cut (see ``ClaimCheck.notes``)."""
        from engine.cite.claims import check_claim, nearness_by, on_quote_pages
        from engine.cite.support import SupportScorer

        def search(text: str, count: int, report: ProgressCallback, token: CancelToken | None) -> list[SearchHit]:
            return self.search(text, k=count, source=source, doc_ids=doc_ids, rewrite=False, progress=report,
                               cancel=token)

        nearness = nearness_by(SupportScorer(self.support_embedder, judge=None, reader=None))
        result = check_claim(claim, search, self.support_judge, k=k, progress=progress, cancel=cancel,
                             nearness=nearness)
        return on_quote_pages(result, self._quote_page)

    def _quote_page(self, passage: CheckedPassage) -> int | None:
        """The page a library passage's quote is on (from its words' boxes), None for a datastore's."""
        if passage.source != LIBRARY_SOURCE:
            return None
        stored = self.passage(passage.passage_id)
        start = stored.text.find(passage.quote)  # a hit's text may carry a title line before the passage's
        boxes = stored.rects_for_span(start, start + len(passage.quote)) if start >= 0 else ()
        return boxes[0].page if boxes else None

    def check_evidence(self, claim: str, evidence: str, reader: SupportReader | None = None) -> PairVerdict:
        """Judge ``claim`` against the given evidence text: verdict, score, the deciding quote, and notes.
        ``reader``: a language model that reads again what the judge's model found unsupported."""
        from engine.cite.claims import judge_pair

        return judge_pair(self.support_judge, claim, evidence, reader)

    def check_pairs(self, pairs: Sequence[tuple[str, str]], reader: SupportReader | None = None,
                    ) -> list[PairVerdict]:
        """Judge many (claim, evidence) pairs in one batch (ClaimError on an unusable pair)."""
        from engine.cite.claims import judge_pairs

        return judge_pairs(self.support_judge, pairs, reader)

    def support_reader(self, model: str | Path | None = None) -> SupportReader:
        """The language model (``model``, else settings, else the bundled one) as a second reader of claims
        (engine/synthesis/support_reader.py). A model too small to write is refused: it cannot read well
        enough to overrule the judge."""
        from engine.errors import ClaimError
        from engine.synthesis.support_reader import SupportReader

        chosen = self.model_file(model)
        if chosen.path is None:
            raise ClaimError("No language model is set up; choose one that can write (Settings, `quire models`, or "
                             "--model) to use --read.")
        if chosen.small:
            raise ClaimError(f"The language model {chosen.path.name} is too small to read claims against evidence; "
                             "choose a model that can write (Settings, `quire models`, or --model) to use --read.")
        return SupportReader(self.language_model(chosen.path))
