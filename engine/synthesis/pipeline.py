"""ask(question): retrieve -> evidence -> plan -> write (or digest) -> verify -> Answer.

Everything the pipeline needs from the rest of the engine comes in as a callable or a protocol
(``retrieve``, a ``LanguageModel`` factory, the support scorer), so every stage runs in tests
with a scripted fake LM and a deterministic embedder, and for real with SmolLM2 and MiniLM.

Faithfulness does not depend on the model: every ``[n]`` left in the answer names a passage the
model was given and comes with a verbatim quote of it. When the model's draft does not survive
verification (``mode="auto"``), or the user asks for it, the answer is the evidence digest.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from engine.cite.support import SupportScorer
from engine.cite.verify import RectsFor, VerifyReport, no_rects, verify_text
from engine.errors import Cancelled, GenerationError, QueryError
from engine.generate.base import LanguageModel, TokenCallback
from engine.progress import CancelToken
from engine.synthesis.digest import digest_sentences
from engine.synthesis.evidence import RELEVANCE_THRESHOLD, Evidence, extract_evidence, relevant, to_reference
from engine.synthesis.plan import Theme, plan_themes
from engine.synthesis.textjoin import answer_text
from engine.synthesis.write import ContextTooSmall, StageCallback, WriteOutcome, Writer, WriterOptions
from engine.types import Answer, AnswerMode, AnswerSentence, Reference, SearchHit, StepCost

log = logging.getLogger(__name__)

Retrieve = Callable[[str, int], list[SearchHit]]  # (query, k) -> ranked hits
HitText = Callable[[SearchHit], str]  # the passage text quotes are cut from (library: as stored)

MAX_QUESTION_CHARS = 1000
MODES = ("auto", "write", "digest")


@dataclass(frozen=True)
class AskOptions:
    top_n: int = 8
    mode: str = "auto"  # "auto": write, fall back to the digest if the draft fails verification
    feedback: bool = True
    quotes_per_passage: int = 2
    max_themes: int = 3
    relevance_threshold: float = RELEVANCE_THRESHOLD
    min_supported: float = 0.5  # auto mode: share of citation-worthy sentences that must survive
    feedback_k: int = 2  # passages retrieved per feedback query
    writer: WriterOptions = field(default_factory=WriterOptions)

    def as_pairs(self) -> tuple[tuple[str, str], ...]:
        return (("top_n", str(self.top_n)), ("mode", self.mode), ("feedback", str(self.feedback)),
                ("quotes_per_passage", str(self.quotes_per_passage)), ("max_themes", str(self.max_themes)),
                ("relevance_threshold", str(self.relevance_threshold)), ("min_supported", str(self.min_supported)))


def normalise_question(question: str) -> tuple[str, str]:
    """The question as used (whitespace collapsed, at most MAX_QUESTION_CHARS) and a notice if shortened."""
    cleaned = " ".join((question or "").split())
    if not cleaned:
        raise QueryError("The question is empty; type a question, e.g. quire ask \"How is SPECTER trained?\"")
    if len(cleaned) > MAX_QUESTION_CHARS:
        cut = cleaned.rfind(" ", 0, MAX_QUESTION_CHARS)
        cleaned = cleaned[: cut if cut > MAX_QUESTION_CHARS // 2 else MAX_QUESTION_CHARS]
        return cleaned, f"Your question was {len(question):,} characters long; Quire used its first {len(cleaned):,}."
    return cleaned, ""


class _Clock:
    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.last = self.start
        self.timings: list[tuple[str, float]] = []

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings.append((stage, round(now - self.last, 3)))
        self.last = now

    def done(self) -> tuple[tuple[str, float], ...]:
        return (*self.timings, ("total", round(time.perf_counter() - self.start, 3)))


def ask(question: str, *, retrieve: Retrieve, scorer: SupportScorer,
        language_model: Callable[[], LanguageModel] | None = None, options: AskOptions | None = None,
        hit_text: HitText | None = None, rects_for: RectsFor = no_rects, on_token: TokenCallback | None = None,
        on_stage: StageCallback | None = None, cancel: CancelToken | None = None) -> Answer:
    """Answer ``question`` from retrieved passages; see the module docstring for the guarantees."""
    options = options or AskOptions()
    if options.mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    stage = on_stage or (lambda _s: None)
    clock = _Clock()
    used, notice = normalise_question(question)
    base = {"question": question if len(question) <= MAX_QUESTION_CHARS else used, "settings": options.as_pairs(),
            "id": uuid.uuid4().hex[:16], "created_at": time.time()}

    def cancelled(sentences: Sequence[AnswerSentence] = (), refs: Sequence[Reference] = (), **extra: object) -> Answer:
        cited = _cited(sentences, refs)
        return Answer(text=answer_text(sentences), sentences=tuple(sentences), references=cited,
                      mode=AnswerMode.WRITTEN, contexts=tuple(refs), cancelled=True,
                      notice="Cancelled; what was written so far is kept.", timings=clock.done(),
                      **base, **extra)  # type: ignore[arg-type]

    stage("retrieving")
    try:
        hits = retrieve(used, options.top_n)
    except Cancelled:
        return cancelled()
    clock.lap("retrieving")
    if cancel is not None and cancel.cancelled:
        return cancelled()
    references = [to_reference(h, i + 1, hit_text(h) if hit_text else None) for i, h in enumerate(hits)]
    evidence = relevant(extract_evidence(used, references, scorer, options.quotes_per_passage,
                                         [h.is_reference for h in hits]), options.relevance_threshold)
    clock.lap("evidence")
    if not evidence:
        text = ("I found nothing relevant to this question in your library" +
                (" or the attached datastores" if any(not h.is_library for h in hits) else "") +
                ", so I will not write an answer. Try other words, or add papers on the topic.")
        return Answer(text=text, sentences=(AnswerSentence(text, needs_citation=False, supported=True),),
                      references=(), mode=AnswerMode.NO_EVIDENCE, contexts=tuple(references),
                      notice=notice, timings=clock.done(), **base)  # type: ignore[arg-type]
    themes = plan_themes(used, evidence, scorer, options.max_themes)
    clock.lap("planning")
    given = {e.reference.n: e.reference for e in evidence}
    titles = {n: r.title for n, r in given.items()}

    def digest(reason: str, steps: Sequence[StepCost] = (), model: str = "") -> Answer:
        sentences = digest_sentences(themes, given, rects_for)
        return Answer(text=answer_text(sentences, digest=True), sentences=tuple(sentences),
                      references=_cited(sentences, list(given.values())), mode=AnswerMode.DIGEST,
                      sections=tuple(t.title for t in themes), contexts=tuple(given.values()),
                      notice=" ".join(x for x in (notice, reason) if x), timings=clock.done(), steps=tuple(steps),
                      model=model, **base)  # type: ignore[arg-type]

    if options.mode == "digest" or language_model is None:
        return digest("" if options.mode == "digest" else "No language model is available; showing the evidence.")
    lm = language_model()
    writer = Writer(lm, WriterOptions(**{**options.writer.__dict__, "feedback": options.feedback}), on_token,
                    stage, cancel)

    def more(query: str) -> list[Evidence]:
        known = {r.passage_id for r in references} | {r.passage_id for r in given.values()}
        fresh = [h for h in retrieve(query, options.feedback_k + 2) if h.passage_id not in known][: options.feedback_k]
        start = max([*given, *(r.n for r in references)]) + 1
        new_refs = [to_reference(h, start + i, hit_text(h) if hit_text else None) for i, h in enumerate(fresh)]
        found = relevant(extract_evidence(query, new_refs, scorer, options.quotes_per_passage),
                         options.relevance_threshold)
        references.extend(new_refs)
        return found

    try:
        outcome = writer.write(used, themes, titles, more)
    except (ContextTooSmall, GenerationError) as exc:
        log.warning("writing failed (%s); answering with the evidence digest", exc)
        return digest(f"The model could not write this answer ({exc}); showing the evidence instead.",
                      model=lm.model_id)
    except Cancelled:
        return cancelled(model=lm.model_id)
    clock.lap("writing")
    stage("verifying")
    given.update({e.reference.n: e.reference for e in outcome.extra})
    sentences, report = _verify(outcome, scorer, given, rects_for)
    clock.lap("verifying")
    if outcome.cancelled:
        return cancelled(sentences, list(given.values()), model=lm.model_id, steps=tuple(outcome.steps),
                         sections=tuple(t.title for t in themes))
    worthy = [s for s in sentences if s.needs_citation]
    supported = sum(s.supported for s in worthy)
    if options.mode == "auto" and (not worthy or supported < options.min_supported * len(worthy)):
        return digest(f"The model's draft did not hold up against the sources ({supported} of {len(worthy)} "
                      "sentences supported), so Quire shows the evidence itself.", outcome.steps, lm.model_id)
    parts = [notice, outcome.trimmed and f"Note: {outcome.trimmed}."]
    if report.invented or report.dropped:
        parts.append(f"Verification removed {report.invented + report.dropped} citation(s) the sources do not back.")
    if report.unsupported:
        parts.append(f"{len(report.unsupported)} sentence(s) could not be matched to a source and are marked.")
    return Answer(text=answer_text(sentences), sentences=tuple(sentences),
                  references=_cited(sentences, list(given.values())), mode=AnswerMode.WRITTEN,
                  sections=tuple(t.title for t in themes), contexts=tuple(given.values()),
                  notice=" ".join(p for p in parts if p), timings=clock.done(), steps=tuple(outcome.steps),
                  model=lm.model_id, **base)  # type: ignore[arg-type]


def _verify(outcome: WriteOutcome, scorer: SupportScorer, given: dict[int, Reference],
            rects_for: RectsFor) -> tuple[list[AnswerSentence], VerifyReport]:
    report = VerifyReport()
    sentences: list[AnswerSentence] = []
    for section, text in enumerate(outcome.sections):
        sentences.extend(verify_text(text, given, scorer, rects_for, True, section, report))
    return sentences, report


def _cited(sentences: Sequence[AnswerSentence], references: Sequence[Reference]) -> tuple[Reference, ...]:
    numbers = {c.n for s in sentences for c in s.citations}
    return tuple(sorted((r for r in references if r.n in numbers), key=lambda r: r.n))


__all__ = ["AskOptions", "Theme", "ask", "normalise_question"]
