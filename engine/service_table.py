"""The glue between the Engine facade and the table of papers: which papers are in scope, searching
within one paper, the writer, the support scorer. Part of the service layer, beside service_ask: the
facade hands it a :class:`TableTools`, never the Engine; the table itself
(engine.synthesis.paper_table) gets only plain callables and values.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from engine.cite.support import SupportScorer
from engine.config import Settings
from engine.embed import Embedder
from engine.errors import EngineError
from engine.generate.base import LanguageModel
from engine.models import language_model_file
from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.protocols import Searcher
from engine.request import LIBRARY
from engine.store import Library
from engine.synthesis.evidence import to_reference
from engine.synthesis.paper_table import PaperInScope, RowCallback, build_table, default_columns
from engine.synthesis.pipeline import normalise_question
from engine.table_types import PaperTable, TableColumn
from engine.types import DocumentStatus, PageRect, Passage, Reference

log = logging.getLogger(__name__)

MODES = ("auto", "write", "quotes")
QUOTABLE_OVERFETCH = 3  # hits asked for per passage a cell may quote (the rest may be table rows)
TOO_SMALL_NOTICE = ("The language model is too small to write sentences that hold up against the papers, so each "
                    "cell is the paper's own sentence (choose a larger model, or ask for written cells anyway).")


@dataclass(frozen=True)
class TableTools:
    """What a table uses, handed down by the facade: the library, a search and a model loader of their own
    (never the Engine or its methods); models are loaded only when called."""

    settings: Settings
    library: Library  # the papers in library order, by id or unique id prefix; passages by id
    search: Searcher
    language_model: Callable[[str | Path | None], LanguageModel]  # None: the configured model
    support_embedder: Callable[[], Embedder]


def papers_in_scope(tools: TableTools, doc_ids: Collection[str] | None) -> list[PaperInScope]:
    """The library's readable papers (``doc_ids``: only those; ids or unique prefixes), in library order."""
    documents = tools.library.documents()
    if doc_ids is not None:
        wanted = {tools.library.document(doc_id).id for doc_id in doc_ids}
        documents = [d for d in documents if d.id in wanted]
    return [PaperInScope(d.id, replace(d.bib, title=d.bib.title or Path(d.path).name)) for d in documents
            if d.status != DocumentStatus.FAILED and d.passage_count > 0]


def engine_table(tools: TableTools, question: str, columns: Sequence[TableColumn] | None = None, *,
                 doc_ids: Collection[str] | None = None, mode: str = "auto", model: str | Path | None = None,
                 on_row: RowCallback | None = None, progress: ProgressCallback = no_progress,
                 cancel: CancelToken | None = None) -> PaperTable:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    asked = normalise_question(question)
    used, notice = asked.used, asked.notice
    papers = papers_in_scope(tools, doc_ids)
    lm, lm_notice = _writer(tools, mode, model) if papers else (None, "")

    def search(query: str, paper: PaperInScope, k: int) -> list[Reference]:
        # Rewriting and reranking are left out: a paper's few passages are reread sentence by sentence
        # for every cell, and 200 papers times five columns of model calls take minutes.
        # A cell quotes running text only; a paper's table rows and captions are short and full of its
        # title's words, so keyword search alone (before the paper's passages are embedded) can rank
        # them all first: more are asked for and only running text is kept.
        hits = tools.search(query, k=QUOTABLE_OVERFETCH * k + 2, source=LIBRARY, doc_ids=[paper.doc_id],
                            rewrite=False, rerank="none", spelling=False, cancel=cancel)
        kept = []
        for hit in hits:
            stored = _stored(tools, hit.passage_id)
            if not hit.is_reference and (stored is None or stored.kind == "text"):
                kept.append((hit, stored.text if stored is not None else hit.text))
            if len(kept) == k:
                break
        return [to_reference(hit, i + 1, text) for i, (hit, text) in enumerate(kept)]

    def rects_for(passage_id: str, start: int, end: int) -> tuple[PageRect, ...]:
        try:
            return tools.library.passage(passage_id).rects_for_span(start, end)
        except EngineError:
            return ()

    scorer = SupportScorer(tools.support_embedder(),
                           reader="shipped" if tools.settings.generation.answer_reader else None)
    return build_table(used, columns or default_columns(), papers, search=search, scorer=scorer, lm=lm,
                       rects_for=rects_for, on_row=on_row, progress=progress, cancel=cancel,
                       notice=" ".join(n for n in (notice, lm_notice) if n))


def _stored(tools: TableTools, passage_id: str) -> Passage | None:
    """The passage as stored (its text is what quotes are cut from and highlighted in); None if it is gone."""
    try:
        return tools.library.passage(passage_id)
    except EngineError:
        return None


def _writer(tools: TableTools, mode: str, model: str | Path | None) -> tuple[LanguageModel | None, str]:
    """The model that writes the cells, or None for quotes; and a notice when the choice needs saying."""
    if mode == "quotes":
        return None, ""
    model_file = language_model_file(model, tools.settings.generation.model)
    if model_file.path is None:
        return None, "No language model is installed, so each cell is the paper's own sentence."
    if mode == "auto" and model_file.small:
        return None, TOO_SMALL_NOTICE
    return tools.language_model(model), ""


__all__ = ["MODES", "TableTools", "engine_table", "papers_in_scope"]
