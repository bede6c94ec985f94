"""The glue between the Engine facade and the answer pipeline: the request checked, search, passages,
rectangles, the model, saving. Part of the service layer, kept out of engine/service.py so the facade
stays thin. The facade hands it an :class:`AnswerTools` (what answering uses from the engine), never
the Engine itself; the pipeline below it (engine.synthesis) gets only plain callables and values.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from engine.cite.support import SupportScorer
from engine.config import Settings
from engine.embed import Embedder
from engine.errors import AskRequestError, DocumentNotFoundError, EngineError, ModelNotFoundError, QueryError
from engine.generate.base import LanguageModel, TokenCallback
from engine.models import LanguageModelFile, language_model_file
from engine.progress import CancelToken, Progress
from engine.protocols import Searcher
from engine.request import ALL, LIBRARY, MODES, AskRequest, source_problem
from engine.store import Library
from engine.store.answers import save_answer
from engine.synthesis.pipeline import AskOptions, Question, ask, normalise_question
from engine.synthesis.ralm import RetrievalWhileWriting
from engine.synthesis.write import StageCallback, WriterOptions
from engine.types import Answer, AnswerMode, PageRect, SearchHit

log = logging.getLogger(__name__)

# Measured with benchmarks/answers.py (golden set, --mode write): the bundled SmolLM2-135M
# (~100 MB as Q4_1) leaves 60-100 % of its sentences unsupported, so every draft would be thrown
# away by auto mode after a minute or two of CPU time. Models this small (engine.models.LanguageModelFile.small)
# answer with the digest unless the user asks for writing (--write / mode="write").
TOO_SMALL_NOTICE = ("The language model is too small to write answers that hold up against the sources, so "
                    "this is the evidence itself, grouped by theme (use --write to see the model's prose anyway, "
                    "or pick a larger model).")


@dataclass(frozen=True)
class AnswerTools:
    """What answering uses, handed down by the facade: the library, a search and a model loader of their
    own (never the Engine or its methods); models are loaded only when called."""

    settings: Settings
    library: Library  # papers by id or unique id prefix, passages by id, the answer history
    search: Searcher
    datastore_names: Callable[[], Sequence[str]]
    language_model: Callable[[str | Path | None], LanguageModel]  # None: the configured model
    support_embedder: Callable[[], Embedder]


def validated(request: AskRequest, tools: AnswerTools) -> tuple[AskRequest, Question]:
    """``request`` with its papers' ids resolved, and its question made ready (once, here); AskRequestError
    says what cannot be asked and why.

    The one place a request is checked, so the CLI, the UI and the benchmarks get the same errors
    before any model is loaded or any search is run."""
    if request.mode is not None and request.mode not in MODES:
        raise AskRequestError(f"Unknown answer mode {request.mode!r}: use one of {', '.join(MODES)}.")
    try:
        question = normalise_question(request.question)
    except QueryError as exc:
        raise AskRequestError(str(exc)) from None
    scope = request.scope
    needs_names = scope.source not in (ALL, LIBRARY)  # listing the datastores is a folder scan: only when named
    problem = source_problem(scope.source, tools.datastore_names() if needs_names else ())
    if problem:
        raise AskRequestError(problem)
    if scope.doc_ids is None:
        return request, question
    if not scope.doc_ids:
        raise AskRequestError("The question is limited to papers but names none; select one or more papers, "
                              "or ask the whole library.")
    resolved = []
    for doc_id in scope.doc_ids:
        try:
            resolved.append(tools.library.document(doc_id).id)
        except DocumentNotFoundError:
            raise AskRequestError(f"The paper {doc_id!r} is not in the library (it may have been removed); "
                                  "choose papers that `quire library list` shows, or ask the whole "
                                  "library.") from None
    return replace(request, scope=replace(scope, doc_ids=tuple(resolved))), question


@dataclass(frozen=True)
class AnswerPlan:
    """How one answer is made, decided once before any work from the request, the settings and the
    measured constants (through :class:`AskOptions`' defaults), and recorded with the answer.

    The steps below get what they need from it; nothing decides the mode, the model or an option again.
    """

    request: AskRequest  # validated: its papers' ids resolved
    question: Question  # the request's question, made ready once
    settings: Settings
    mode: str  # "auto", "write" or "digest", after the model's size is taken into account
    notice: str  # why the answer is a digest although writing was not ruled out by the request
    model: LanguageModelFile  # the file asked for, else the configured one, else the bundled one
    load_model: bool  # a digest loads no model unless the request names one
    options: AskOptions
    answer_reader: bool  # the trained answer reader ranks the sentences (else the hand-weighted score)

    def record(self) -> tuple[tuple[str, str], ...]:
        """What the answer was made with beyond its options: the request's own choices, every setting and
        the model file, and the scope as the user named it (the history shows it)."""
        request, scope = self.request, self.request.scope
        asked = (("request.mode", request.mode or ""), ("request.model", str(request.model or "")),
                 ("request.source", scope.source),
                 ("request.papers", ",".join(scope.doc_ids) if scope.doc_ids is not None else ""),
                 ("request.rewrite", "" if request.options.rewrite is None else str(request.options.rewrite)))
        label = (("scope", scope.label),) if scope.label else ()
        return (*asked, *settings_record(self.settings), *model_record(self.model.path), *label)


def plan_answer(request: AskRequest, settings: Settings, question: Question | None = None) -> AnswerPlan:
    """The plan for a validated ``request`` (and its question as validation made it ready) under
    ``settings``: mode, model file, options."""
    generation = settings.generation
    mode = request.mode or ("digest" if generation.digest else "auto")
    notice = ""
    model_file = language_model_file(request.model, generation.model)
    # Too small to write (auto shows the digest) or to judge sentences.
    if request.mode is None and mode == "auto" and model_file.small:
        mode, notice = "digest", TOO_SMALL_NOTICE
    asked = request.options
    options = AskOptions(top_n=asked.top_n or settings.retrieval.top_n, mode=mode,
                         feedback=generation.feedback if asked.feedback is None else asked.feedback,
                         judge_answers=not model_file.small,
                         read_unsupported=generation.read_unsupported,
                         writer=WriterOptions(answer_tokens=min(160, max(60, generation.max_answer_tokens))),
                         while_writing=RetrievalWhileWriting(stride=generation.retrieval_stride,
                                                             query_tokens=generation.retrieval_query_tokens))
    return AnswerPlan(request=request, question=question or normalise_question(request.question),
                      settings=settings, mode=mode, notice=notice, model=model_file,
                      load_model=mode != "digest" or request.model is not None, options=options,
                      answer_reader=generation.answer_reader)


def answer_request(request: AskRequest, tools: AnswerTools, *, on_token: TokenCallback | None = None,
                   on_stage: StageCallback | None = None, cancel: CancelToken | None = None) -> Answer:
    """Check ``request``, plan how to answer it, answer it from the library (and datastores), record the
    plan with the answer, and save it in the history unless the request says not to."""
    request, question = validated(request, tools)
    plan = plan_answer(request, tools.settings, question)
    language_model: Callable[[], LanguageModel] | None = None
    if plan.load_model:
        if plan.model.path is not None:
            if on_stage is not None:
                on_stage("loading")  # minutes for a large model on a CPU: the user is told what they wait for
            # A bad --model fails here, before any work.
            path = plan.model.path
            loaded = load_unless_cancelled(lambda: tools.language_model(path), cancel)
            if loaded is not None:
                language_model = lambda: loaded  # noqa: E731
        else:
            log.warning("no language model installed; answering with the evidence digest")

    library = _LibraryPassages(tools, plan.request, on_stage, cancel)
    scorer = SupportScorer(tools.support_embedder(), reader="shipped" if plan.answer_reader else None)
    answer = ask(plan.question, retrieve=library.retrieve, scorer=scorer,
                 language_model=language_model, options=plan.options, hit_text=library.hit_text,
                 rects_for=library.rects_for, on_token=on_token, on_stage=on_stage, cancel=cancel,
                 search_while_writing=library.search_while_writing)
    if plan.notice and answer.mode == AnswerMode.DIGEST:
        answer = replace(answer, notice=" ".join(p for p in (answer.notice, plan.notice) if p))
    answer = replace(answer, settings=(*answer.settings, *plan.record()))
    if plan.request.options.save:
        try:
            save_answer(tools.library, answer)
        except EngineError as exc:  # an answer the user has is worth more than its history entry
            log.warning("could not save the answer: %s", exc)
    return answer


class _LibraryPassages:
    """Search for one request, and the stored text and page rectangles of the library passages it found
    (datastore passages have neither: their hit text is all there is)."""

    def __init__(self, tools: AnswerTools, request: AskRequest, on_stage: StageCallback | None,
                 cancel: CancelToken | None) -> None:
        self._tools = tools
        self._request = request
        self._stage = on_stage or (lambda _s: None)
        self._cancel = cancel
        self._is_library: dict[str, bool] = {}

    def _progress(self, report: Progress) -> None:
        if report.label.startswith("rerank"):
            self._stage("reranking")
        elif report.stage in ("spelling", "source"):  # "also searching for ..."; a broken datastore left out
            self._stage(report.label)

    def retrieve(self, query: str, k: int) -> list[SearchHit]:
        scope = self._request.scope
        hits = self._tools.search(query, k=k, source=scope.source, doc_ids=scope.doc_ids,
                                  rewrite=self._request.options.rewrite, progress=self._progress, cancel=self._cancel)
        self._is_library.update((h.passage_id, h.is_library) for h in hits)
        return hits

    def search_while_writing(self, query: str, k: int) -> list[SearchHit]:
        """BM25 over the same scope, as In-Context RALM searched: no rewriting (a language model call would
        evict the draft from llama.cpp's cache), no reranking, no spelling, no embedding of a half-written
        sentence."""
        scope = self._request.scope
        hits = self._tools.search(query, k=k, source=scope.source, doc_ids=scope.doc_ids, rewrite=False,
                                  progress=self._progress, cancel=self._cancel, rerank="none", spelling=False,
                                  lexical_only=True)
        self._is_library.update((h.passage_id, h.is_library) for h in hits)
        return hits

    def hit_text(self, hit: SearchHit) -> str:
        if not hit.is_library:
            return hit.text
        try:
            return self._tools.library.passage(hit.passage_id).text
        except EngineError:
            return hit.text

    def rects_for(self, passage_id: str, start: int, end: int) -> tuple[PageRect, ...]:
        if not self._is_library.get(passage_id, False):
            return ()
        try:
            return self._tools.library.passage(passage_id).rects_for_span(start, end)
        except EngineError:
            return ()


def load_unless_cancelled(load: Callable[[], LanguageModel], cancel: CancelToken | None,
                          poll_s: float = 0.05) -> LanguageModel | None:
    """``load()``, or None as soon as ``cancel`` is set while it runs.

    llama.cpp cannot stop loading a model half way, and a large one takes minutes on a CPU; so the
    load runs on a thread of its own and a Stop is answered at once. The load still finishes (the
    engine keeps the model for the next question, which waits for it under the engine's lock).
    """
    if cancel is None:
        return load()
    if cancel.cancelled:
        return None
    loaded: list[LanguageModel] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            loaded.append(load())
        except BaseException as exc:  # handed to the caller's thread below
            failed.append(exc)

    loader = threading.Thread(target=run, name="quire-model-load", daemon=True)
    loader.start()
    while loader.is_alive():
        loader.join(poll_s)
        if cancel.cancelled and loader.is_alive():
            log.info("stopped waiting for the language model to load; it finishes loading in the background")
            return None
    if failed:
        raise failed[0]
    return loaded[0]


def settings_record(settings: Settings) -> tuple[tuple[str, str], ...]:
    """Every setting as ``("section.key", value)`` pairs, so a stored answer says how it was made."""
    return tuple((f"{section}.{key}", str(value)) for section, values in settings.to_dict().items()
                 if isinstance(values, dict) for key, value in values.items())


def model_record(path: Path | None) -> tuple[tuple[str, str], ...]:
    """The language model file: its name, size and a SHA-256 of its first MiB (the GGUF header and
    metadata, which name the weights and their quantisation), cached per file version."""
    if path is None or not path.is_file():
        return (("model.file", ""),)
    stat = path.stat()
    return (("model.file", path.name), ("model.bytes", str(stat.st_size)),
            ("model.head_sha256", _head_sha256(str(path), stat.st_size, stat.st_mtime_ns)))


@lru_cache(maxsize=8)
def _head_sha256(path: str, size: int, mtime_ns: int) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read(1 << 20)).hexdigest()


__all__ = ["AnswerPlan", "AnswerTools", "ModelNotFoundError", "Searcher", "answer_request", "plan_answer", "validated"]
