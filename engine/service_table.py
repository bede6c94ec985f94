"""The glue between the Engine facade and the table of papers: which papers are in scope, searching
within one paper, the writer, the support scorer. Part of the service layer, beside service_ask;
the table itself (engine.synthesis.paper_table) gets only plain callables and values.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine.cite.support import SupportScorer
from engine.errors import EngineError
from engine.generate.base import LanguageModel
from engine.models import default_lm_path, is_small_model
from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.service_search import build_retriever
from engine.synthesis.evidence import to_reference
from engine.synthesis.paper_table import PaperInScope, RowCallback, build_table, default_columns
from engine.synthesis.pipeline import normalise_question
from engine.types import DocumentStatus, PageRect, PaperTable, Reference, TableColumn

if TYPE_CHECKING:
    from engine.service import Engine

log = logging.getLogger(__name__)

MODES = ("auto", "write", "quotes")
TOO_SMALL_NOTICE = ("The language model is too small to write sentences that hold up against the papers, so each "
                    "cell is the paper's own sentence (choose a larger model, or ask for written cells anyway).")


def papers_in_scope(engine: Engine, doc_ids: Collection[str] | None) -> list[PaperInScope]:
    """The library's readable papers (``doc_ids``: only those; ids or unique prefixes), in library order."""
    documents = engine.documents()
    if doc_ids is not None:
        wanted = {engine.document(doc_id).id for doc_id in doc_ids}
        documents = [d for d in documents if d.id in wanted]
    return [PaperInScope(d.id, d.title or Path(d.path).name, d.authors, d.year) for d in documents
            if d.status != DocumentStatus.FAILED and d.passage_count > 0]


def engine_table(engine: Engine, question: str, columns: Sequence[TableColumn] | None = None, *,
                 doc_ids: Collection[str] | None = None, mode: str = "auto", model: str | Path | None = None,
                 on_row: RowCallback | None = None, progress: ProgressCallback = no_progress,
                 cancel: CancelToken | None = None) -> PaperTable:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    used, notice = normalise_question(question)
    papers = papers_in_scope(engine, doc_ids)
    lm, lm_notice = _writer(engine, mode, model)
    # Reranking and rewriting are left out: a paper's few passages are reread sentence by sentence
    # for every cell anyway, and 200 papers times five columns of model calls would take minutes.
    retriever = build_retriever(engine, "library", rewrite=False, rerank="none", spelling=False)

    def search(query: str, paper: PaperInScope, k: int) -> list[Reference]:
        hits = retriever.search(query, k + 2, [paper.doc_id], no_progress, cancel)
        kept = [h for h in hits if not h.is_reference][:k]
        return [to_reference(h, i + 1, _stored_text(engine, h.passage_id, h.text)) for i, h in enumerate(kept)]

    def rects_for(passage_id: str, start: int, end: int) -> tuple[PageRect, ...]:
        try:
            return engine.passage(passage_id).rects_for_span(start, end)
        except EngineError:
            return ()

    return build_table(used, columns or default_columns(), papers, search=search,
                       scorer=SupportScorer(engine.support_embedder), lm=lm, rects_for=rects_for, on_row=on_row,
                       progress=progress, cancel=cancel, notice=" ".join(n for n in (notice, lm_notice) if n))


def _stored_text(engine: Engine, passage_id: str, fallback: str) -> str:
    """The passage as stored: the text quotes are cut from and highlighted in."""
    try:
        return engine.passage(passage_id).text
    except EngineError:
        return fallback


def _writer(engine: Engine, mode: str, model: str | Path | None) -> tuple[LanguageModel | None, str]:
    """The model that writes the cells, or None for quotes; and a notice when the choice needs saying."""
    if mode == "quotes":
        return None, ""
    model_file = model or engine.settings.generation.model or default_lm_path()
    if model_file is None:
        return None, "No language model is installed, so each cell is the paper's own sentence."
    if mode == "auto" and is_small_model(model_file):
        return None, TOO_SMALL_NOTICE
    return engine.language_model(model), ""


__all__ = ["MODES", "engine_table", "papers_in_scope"]
