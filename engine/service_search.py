"""Assembling a :class:`Retriever` for an Engine: which sources, which rewriter, which reranker.

Part of the service layer, kept out of engine/service.py so the facade stays a thin list of entry
points. The facade hands it a :class:`SearchTools` (settings, sources, lazily loaded models), never
the Engine itself; :class:`Search` is the search the facade offers, and what answers and tables are
handed to search with (an engine.protocols.Searcher), so they never call back into the Engine.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from engine.config import Settings
from engine.embed import Embedder
from engine.errors import EngineError
from engine.generate.base import LanguageModel
from engine.models import language_model_file
from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.request import ALL, DATASTORE, LIBRARY, source_problem
from engine.rerank.choose import make_reranker
from engine.retrieve.library_source import LibrarySource
from engine.retrieve.retriever import RetrievalOptions, Retriever
from engine.retrieve.rewrite import LMQueryRewriter, QueryRewriter
from engine.retrieve.source import PassageSource
from engine.text.keywords import split_words
from engine.text.scripts import word_script
from engine.types import SearchHit

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchTools:
    """What search uses from the engine, handed down by the facade; models load only when called."""

    settings: Settings
    models_dir: Path  # where a plain "cross-encoder" reranker is looked for
    library: LibrarySource
    datastores: Callable[[], list[PassageSource]]
    embedder: Callable[[], Embedder]
    language_model: Callable[[], LanguageModel]  # the configured model (rewriting, the "lm" reranker)


def select_sources(tools: SearchTools, source: str) -> list[PassageSource]:
    """``"all"``: the library and every datastore; ``"library"``; ``"datastore"``: every datastore;
    anything else names one datastore."""
    if source == LIBRARY:
        return [tools.library]
    datastores = list(tools.datastores())
    problem = source_problem(source, [s.name for s in datastores])
    if problem:
        raise EngineError(problem)
    if source == ALL:
        return [tools.library, *datastores]
    if source == DATASTORE:
        return datastores
    return [s for s in datastores if s.name == source]


def make_rewriter(tools: SearchTools, rewrite: bool | None) -> QueryRewriter | None:
    """The LM rewriter when rewriting is on and a language model can be loaded; otherwise None."""
    wanted = tools.settings.retrieval.rewrite if rewrite is None else rewrite
    if not wanted:
        return None
    if rewrite is None and language_model_file(None, tools.settings.generation.model).small:
        log.info("query rewriting skipped: the language model is too small to rewrite usefully "
                 "(ask for it with rewrite=True / --rewrite)")
        return None
    try:
        return LMQueryRewriter(tools.language_model())
    except EngineError as exc:
        if rewrite:  # asked for explicitly: say why it cannot be done
            raise
        log.warning("query rewriting skipped: %s", exc)
        return None


def usable_embedder(tools: SearchTools, sources: list[PassageSource]) -> Embedder | None:
    """The engine's embedder, or None (BM25 only) when it cannot be loaded or nothing is embedded yet."""
    library_only = all(s is tools.library for s in sources)
    if library_only and not tools.library.has_vectors():
        return None  # nothing embedded yet: don't load a model only to search an empty index
    try:
        embedder = tools.embedder()
        embedder.dimension  # noqa: B018 - loads the model now so a broken one degrades to BM25 here
    except EngineError as exc:
        log.warning("dense search unavailable (%s); searching by BM25 only", exc)
        return None
    return embedder


def english_model_cannot_read(embedder: str, query: str) -> bool:
    """Whether the bundled English embedder (``embedder`` "") is asked a question in a script it never saw
    (Chinese, Arabic, Russian, ...): its vector of such a question is noise, and fused with BM25 it pulled a
    paper on "CMB power spectrums" above SPECTER's for "SPECTER 是如何训练的？". On XQuAD, BM25 alone did
    better for Chinese and Arabic questions, in their own language and over English paragraphs
    (benchmarks/results/xquad_e5.json); the multilingual embedder reads them and is left on."""
    if embedder:
        return False
    # By its words, not by language detection: a short question around a Latin name ("SPECTER") is too short
    # for the detector to name its language.
    other = [word for word in split_words(query) if word_script(word) not in ("latin", "other") and len(word) > 1]
    return len(other) >= 2


def build_retriever(tools: SearchTools, source: str = ALL, rewrite: bool | None = None,
                    rerank: str | None = None, spelling: bool | None = None, per_paper: int = 0,
                    lexical_only: bool = False) -> Retriever:
    """A Retriever over ``source``; ``per_paper`` > 0 caps passages a paper (answers), 0 leaves a list uncapped;
    ``lexical_only``: BM25 (with its feedback) alone, no embedding."""
    retrieval = tools.settings.retrieval
    sources = select_sources(tools, source)
    options = RetrievalOptions(per_paper=max(0, per_paper),
                               spelling=retrieval.spelling if spelling is None else spelling,
                               dense=not lexical_only)
    reranker = make_reranker(rerank or retrieval.reranker, models_dir=tools.models_dir,
                             language_model=tools.language_model)
    embedder = None if lexical_only else usable_embedder(tools, sources)
    return Retriever(sources, embedder, make_rewriter(tools, rewrite), reranker, options)


@dataclass(frozen=True)
class Search:
    """Hybrid search with ``tools`` (an engine.protocols.Searcher): each call builds the Retriever that the
    tools' settings and the call's overrides ask for."""

    tools: SearchTools

    def __call__(self, query: str, k: int = 10, source: str = ALL, doc_ids: Collection[str] | None = None,
                 rewrite: bool | None = None, rerank: str | None = None, progress: ProgressCallback = no_progress,
                 cancel: CancelToken | None = None, spelling: bool | None = None,
                 per_paper: int = 0, lexical_only: bool = False) -> list[SearchHit]:
        lexical_only = lexical_only or english_model_cannot_read(self.tools.settings.retrieval.embedder, query)
        return build_retriever(self.tools, source, rewrite, rerank, spelling, per_paper, lexical_only).search(
            query, k, doc_ids, progress, cancel)
