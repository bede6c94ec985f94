"""The glue between the Engine facade and the answer pipeline: search, passages, rectangles, the model,
saving. Part of the service layer, kept out of engine/service.py so the facade stays thin; the pipeline
below it (engine.synthesis) gets only plain callables and values.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Collection
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from engine.cite.support import SupportScorer
from engine.config import Settings
from engine.errors import EngineError, ModelNotFoundError
from engine.generate.base import LanguageModel, TokenCallback
from engine.models import default_lm_path, is_small_model
from engine.progress import CancelToken, Progress
from engine.store.answers import save_answer
from engine.synthesis.pipeline import AskOptions, ask
from engine.synthesis.write import StageCallback, WriterOptions
from engine.types import Answer, AnswerMode, PageRect, SearchHit

if TYPE_CHECKING:
    from engine.service import Engine

log = logging.getLogger(__name__)

# Measured with benchmarks/answers.py (golden set, --mode write): the bundled SmolLM2-135M
# (~100 MB as Q4_1) leaves 60-100 % of its sentences unsupported, so every draft would be thrown
# away by auto mode after a minute or two of CPU time. Models this small (engine.models.is_small_model)
# answer with the digest unless the user asks for writing (--write / mode="write").
TOO_SMALL_NOTICE = ("The language model is too small to write answers that hold up against the sources, so "
                    "this is the evidence itself, grouped by theme (use --write to see the model's prose anyway, "
                    "or pick a larger model).")


def engine_ask(engine: Engine, question: str, *, top_n: int | None = None, model: str | Path | None = None,
               feedback: bool | None = None, rewrite: bool | None = None, digest: bool | None = None,
               mode: str | None = None, doc_ids: Collection[str] | None = None, source: str = "all",
               on_token: TokenCallback | None = None, on_stage: StageCallback | None = None,
               cancel: CancelToken | None = None, save: bool = True, table: bool = False) -> Answer:
    generation = engine.settings.generation
    chosen_mode = mode or ("digest" if (digest if digest is not None else generation.digest) else "auto")
    notice = ""
    model_file = model or generation.model or default_lm_path()
    small = is_small_model(model_file)  # too small to write (auto shows the digest) or to judge sentences
    if mode is None and chosen_mode == "auto" and small:
        chosen_mode = "digest"
        notice = TOO_SMALL_NOTICE
    options = AskOptions(top_n=top_n or engine.settings.retrieval.top_n, mode=chosen_mode,
                         feedback=generation.feedback if feedback is None else feedback,
                         table=table, judge_answers=not small,
                         writer=WriterOptions(answer_tokens=min(160, max(60, generation.max_answer_tokens))))
    stage = on_stage or (lambda _s: None)

    language_model: Callable[[], LanguageModel] | None = None
    if chosen_mode != "digest" or model is not None:
        if model is not None or generation.model or default_lm_path() is not None:
            stage("loading")  # minutes for a large model on a CPU: the user is told what they wait for
            loaded = load_unless_cancelled(lambda: engine.language_model(model), cancel)  # a bad --model fails here
            if loaded is not None:
                language_model = lambda: loaded  # noqa: E731
        else:
            log.warning("no language model installed; answering with the evidence digest")

    def progress(report: Progress) -> None:
        if report.label.startswith("rerank"):
            stage("reranking")
        elif report.stage == "spelling":  # "also searching for 'optomechanical' (typed ...)"
            stage(report.label)

    is_library: dict[str, bool] = {}

    def retrieve(query: str, k: int) -> list[SearchHit]:
        hits = engine.search(query, k=k, source=source, doc_ids=doc_ids, rewrite=rewrite, progress=progress,
                             cancel=cancel)
        is_library.update((h.passage_id, h.is_library) for h in hits)
        return hits

    def hit_text(hit: SearchHit) -> str:
        if not hit.is_library:
            return hit.text
        try:
            return engine.passage(hit.passage_id).text
        except EngineError:
            return hit.text

    def rects_for(passage_id: str, start: int, end: int) -> tuple[PageRect, ...]:
        if not is_library.get(passage_id, False):
            return ()
        try:
            return engine.passage(passage_id).rects_for_span(start, end)
        except EngineError:
            return ()

    answer = ask(question, retrieve=retrieve, scorer=SupportScorer(engine.support_embedder),
                 language_model=language_model, options=options, hit_text=hit_text, rects_for=rects_for,
                 on_token=on_token, on_stage=on_stage, cancel=cancel)
    if notice and answer.mode == AnswerMode.DIGEST:
        answer = replace(answer, notice=" ".join(p for p in (answer.notice, notice) if p))
    # What the answer was made with, whole: the options above plus every setting and the model file.
    answer = replace(answer, settings=(*answer.settings, *settings_record(engine.settings),
                                       *model_record(Path(model_file) if model_file else None)))
    if save:
        try:
            save_answer(engine.library, answer)
        except EngineError as exc:  # an answer the user has is worth more than its history entry
            log.warning("could not save the answer: %s", exc)
    return answer


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


__all__ = ["ModelNotFoundError", "engine_ask"]
