"""Assembling a :class:`Retriever` for an Engine: which sources, which rewriter, which reranker.

Part of the service layer (it reads the Engine's settings and lazily loaded models), kept out of
engine/service.py so the facade stays a thin list of entry points.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from engine.embed import Embedder
from engine.errors import EngineError
from engine.models import default_lm_path, is_small_model
from engine.rerank.choose import make_reranker
from engine.retrieve.retriever import RetrievalOptions, Retriever
from engine.retrieve.rewrite import LMQueryRewriter, QueryRewriter
from engine.retrieve.source import PassageSource

if TYPE_CHECKING:
    from engine.service import Engine

log = logging.getLogger(__name__)

def select_sources(engine: Engine, source: str) -> list[PassageSource]:
    """``"all"``: the library and every datastore; ``"library"``; ``"datastore"``: every datastore;
    anything else names one datastore."""
    if source == "library":
        return [engine.library_source]
    datastores = list(engine.datastore_sources())
    if source == "all":
        return [engine.library_source, *datastores]
    if source == "datastore":
        if not datastores:
            raise EngineError("No datastore is installed; add one with `quire datastore add FILE --name NAME`.")
        return datastores
    named = [s for s in datastores if s.name == source]
    if not named:
        names = ", ".join(s.name for s in datastores) or "none installed"
        raise EngineError(f"Unknown search source {source!r}: use all, library, datastore or a datastore name "
                          f"({names}).")
    return named


def make_rewriter(engine: Engine, rewrite: bool | None) -> QueryRewriter | None:
    """The LM rewriter when rewriting is on and a language model can be loaded; otherwise None."""
    wanted = engine.settings.retrieval.rewrite if rewrite is None else rewrite
    if not wanted:
        return None
    if rewrite is None and is_small_model(engine.settings.generation.model or default_lm_path()):
        log.info("query rewriting skipped: the language model is too small to rewrite usefully "
                 "(ask for it with rewrite=True / --rewrite)")
        return None
    language_model = getattr(engine, "language_model", None)
    if language_model is None:
        log.info("query rewriting is on but no language model is available yet; searching with the question")
        return None
    try:
        return LMQueryRewriter(language_model())
    except EngineError as exc:
        if rewrite:  # asked for explicitly: say why it cannot be done
            raise
        log.warning("query rewriting skipped: %s", exc)
        return None


def usable_embedder(engine: Engine, sources: list[PassageSource]) -> Embedder | None:
    """The engine's embedder, or None (BM25 only) when it cannot be loaded or nothing is embedded yet."""
    library_only = all(s is engine.library_source for s in sources)
    if library_only and not engine.library_source.has_vectors():
        return None  # nothing embedded yet: don't load a model only to search an empty index
    try:
        embedder = engine.embedder
        embedder.dimension  # noqa: B018 - loads the model now so a broken one degrades to BM25 here
    except EngineError as exc:
        log.warning("dense search unavailable (%s); searching by BM25 only", exc)
        return None
    return embedder


def build_retriever(engine: Engine, source: str = "all", rewrite: bool | None = None,
                    rerank: str | None = None, spelling: bool | None = None, per_paper: int = 0) -> Retriever:
    """A Retriever over ``source``; ``per_paper`` > 0 caps passages a paper (answers), 0 leaves a list uncapped."""
    settings = engine.settings.retrieval
    sources = select_sources(engine, source)
    options = RetrievalOptions(per_paper=max(0, per_paper),
                               spelling=settings.spelling if spelling is None else spelling)
    reranker = make_reranker(rerank or settings.reranker, models_dir=engine.paths.models,
                             language_model=engine.language_model)
    return Retriever(sources, usable_embedder(engine, sources), make_rewriter(engine, rewrite), reranker, options)
