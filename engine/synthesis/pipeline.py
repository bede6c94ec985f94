"""ask(question): retrieve -> evidence -> direct answer + plan -> write (or digest) -> verify -> Answer
(the steps are engine.synthesis.steps; this module runs them and builds the Answer each way it can end).

Everything the pipeline needs from the rest of the engine comes in as a callable or a protocol
(``retrieve``, a ``LanguageModel`` factory, the support scorer), so every stage runs in tests
with a scripted fake LM and a deterministic embedder, and for real with SmolLM2 and MiniLM.

Faithfulness does not depend on the model: every ``[n]`` left in the answer names a passage the
model was given and comes with a verbatim quote of it; numbers name cited papers 1..k in order of
first use. Every answer opens with its direct answer (section 0). Passages that do not address the
question are dropped before anything is written. When the model's draft does not survive
verification (``mode="auto"``), or the user asks for it, the answer is the evidence digest. When a
model that can read judges that none of the sentences closest to answering does (``mode="auto"``),
nothing is written: the answer says plainly that no passage states an answer and shows the closest
evidence. The same holds, with any model and in the digest, when no passage found mentions any of the
names the question gives ("ReVerb", "Csx23": engine.synthesis.mentions), unless the user asked for prose.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from engine.cite.support import SupportScorer
from engine.cite.verify import RectsFor, Verifier, no_rects
from engine.errors import Cancelled, GenerationError, QueryError
from engine.generate.base import LanguageModel, TokenCallback
from engine.progress import CancelToken
from engine.protocols import ScoresReplies
from engine.request import MODES
from engine.retrieve.fts import readable_text
from engine.synthesis.answer_judge import can_judge
from engine.synthesis.digest import digest_sentences, with_evidence
from engine.synthesis.evidence import Evidence, Quote, closest, direct_answers
from engine.synthesis.mentions import PROBE_PASSAGES, not_mentioned_lead, unmentioned_names
from engine.synthesis.numbering import number_by_paper
from engine.synthesis.options import AskOptions
from engine.synthesis.plan import Theme, plan_themes
from engine.synthesis.steps import (
    Callbacks,
    HitText,
    PassageTools,
    Reading,
    Retrieve,
    choose_evidence,
    fallback_reason,
    read_candidates,
    retrieve_passages,
    unchecked_draft,
    verify_draft,
    write_draft,
    written_notice,
)
from engine.synthesis.support_reader import SupportReader, measured_read_seconds, reads_every_sentence
from engine.synthesis.textjoin import answer_text
from engine.synthesis.write import ContextTooSmall, StageCallback
from engine.types import Answer, AnswerMode, AnswerSentence, Reference, SearchHit, StepCost

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 1000


@dataclass(frozen=True)
class Question:
    """A question made ready once: as asked (kept in the history), as used, and what was changed."""

    asked: str  # decodable (SQLite must be able to store it), otherwise as typed
    used: str  # whitespace collapsed, at most MAX_QUESTION_CHARS
    notice: str  # what was changed and why, or ""


def normalise_question(question: str) -> Question:
    """The question as used (whitespace collapsed, at most MAX_QUESTION_CHARS, undecodable characters
    replaced) with a notice saying what was changed, if anything; QueryError when nothing is left."""
    readable = readable_text(question or "")
    cleaned = " ".join(readable.split())
    if not cleaned:
        raise QueryError("The question is empty; type a question, e.g. quire ask \"How is SPECTER trained?\"")
    notices = []
    if readable != question:
        notices.append("Your question held bytes that are not valid UTF-8 text (shown as \ufffd); Quire searched for "
                       "the rest. Set your terminal to UTF-8 to ask with every character.")
    if len(cleaned) > MAX_QUESTION_CHARS:
        cut = cleaned.rfind(" ", 0, MAX_QUESTION_CHARS)
        cleaned = cleaned[: cut if cut > MAX_QUESTION_CHARS // 2 else MAX_QUESTION_CHARS]
        notices.append(f"Your question was {len(question):,} characters long; Quire used its first {len(cleaned):,}.")
    return Question(asked=readable, used=cleaned, notice=" ".join(notices))


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


@dataclass(frozen=True)
class _Plan:
    """What a digest is made of: the best quote for each thing the question asks, the themes, the numbered
    passages and their rectangles."""

    direct: tuple[Quote, ...]
    themes: Sequence[Theme]
    given: dict[int, Reference]
    rects_for: RectsFor

    @property
    def first(self) -> Quote | None:
        """The quote that answers what the question asks first: the one a written answer shows beside its own."""
        return self.direct[0] if self.direct else None


class _Answers:
    """Builds the Answer each way a question can end, with what every one of them shares (the question
    as stored, the options, id, time, the question's notice and the stage timings)."""

    def __init__(self, question: Question, options: AskOptions) -> None:
        self.clock = _Clock()
        self.used, self.notice = question.used, question.notice
        asked = question.asked
        self.base: dict[str, Any] = {"question": asked if len(asked) <= MAX_QUESTION_CHARS else self.used,
                                     "settings": options.as_pairs(), "id": uuid.uuid4().hex[:16],
                                     "created_at": time.time()}

    def cancelled(self, sentences: Sequence[AnswerSentence] = (), refs: Sequence[Reference] = (),
                  **extra: object) -> Answer:
        return Answer(**_numbered(sentences, refs), mode=AnswerMode.WRITTEN, cancelled=True,
                      notice="Cancelled; what was written so far is kept.", timings=self.clock.done(),
                      **self.base, **extra)  # type: ignore[arg-type]

    def nothing(self, found: Sequence[Evidence], datastores: bool) -> Answer:
        return Answer(**_nothing(found, datastores), mode=AnswerMode.NO_EVIDENCE, notice=self.notice,
                      timings=self.clock.done(), **self.base)  # type: ignore[arg-type]

    def digest(self, plan: _Plan, reason: str, steps: Sequence[StepCost] = (), model: str = "",
               lead: str = "") -> Answer:
        sentences, headings = digest_sentences(plan.direct, plan.themes, plan.given, plan.rects_for, lead)
        return Answer(**_numbered(sentences, list(plan.given.values()), digest=True), mode=AnswerMode.DIGEST,
                      sections=headings, notice=" ".join(x for x in (self.notice, reason) if x),
                      timings=self.clock.done(), steps=tuple(steps), model=model, **self.base)  # type: ignore[arg-type]

    def written(self, sentences: Sequence[AnswerSentence], headings: tuple[str, ...], plan: _Plan, notice: str,
                steps: Sequence[StepCost], model: str) -> Answer:
        sentences, headings = with_evidence(sentences, headings, plan.first, plan.themes, plan.given,
                                            plan.rects_for)
        return Answer(**_numbered(sentences, list(plan.given.values())), mode=AnswerMode.WRITTEN,
                      sections=headings, notice=notice, timings=self.clock.done(), steps=tuple(steps), model=model,
                      **self.base)  # type: ignore[arg-type]


def ask(question: str | Question, *, retrieve: Retrieve, scorer: SupportScorer,
        language_model: Callable[[], LanguageModel] | None = None, options: AskOptions | None = None,
        hit_text: HitText | None = None, rects_for: RectsFor = no_rects, on_token: TokenCallback | None = None,
        on_stage: StageCallback | None = None, cancel: CancelToken | None = None,
        search_while_writing: Retrieve | None = None) -> Answer:
    """Answer ``question`` from retrieved passages; see the module docstring for the guarantees.
    ``search_while_writing`` is the search retrieval while writing uses (default ``retrieve``): one that
    calls no language model, which would evict the draft from llama.cpp's cache."""
    options = options or AskOptions()
    if options.mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    stage = on_stage or (lambda _s: None)
    answers = _Answers(normalise_question(question) if isinstance(question, str) else question, options)
    used, clock = answers.used, answers.clock

    stage("retrieving")
    try:
        hits = retrieve_passages(used, retrieve, options)
    except Cancelled:
        return answers.cancelled()
    clock.lap("retrieving")
    if cancel is not None and cancel.cancelled:
        return answers.cancelled()
    chosen = choose_evidence(used, hits, scorer, options, hit_text)
    clock.lap("evidence")
    if not chosen.evidence:
        return answers.nothing(chosen.found, any(not h.is_library for h in hits))
    given = {e.reference.n: e.reference for e in chosen.evidence}
    try:
        missing = [] if options.mode == "write" else unmentioned_names(
            used, [r.text for r in chosen.references],  # every hit, its text already read by choose_evidence
            lambda name: [_text(h, hit_text) for h in retrieve(name, PROBE_PASSAGES)])
    except Cancelled:
        return answers.cancelled()
    if missing:  # nothing found names what the question asks about: no quote is put forward as its answer
        plan = _Plan(direct_answers(chosen.evidence), plan_themes(used, chosen.evidence, scorer, options.max_themes),
                     given, rects_for)
        return answers.digest(plan, "", lead=not_mentioned_lead(missing))
    lm = language_model() if language_model is not None and options.mode != "digest" else None
    reading = Reading(chosen.evidence, {}, unanswered=False)
    if lm is not None and options.judge_answers and can_judge(lm):
        stage("judging")
        reading = read_candidates(lm, used, chosen.evidence, options, cancel)
        clock.lap("judging")
    plan = _Plan(direct_answers(reading.evidence), plan_themes(used, reading.evidence, scorer, options.max_themes),
                 given, rects_for)
    clock.lap("planning")

    if lm is None:
        return answers.digest(plan, "" if options.mode == "digest"
                              else "No language model is available; showing the evidence.")
    if reading.unanswered and options.mode == "auto" and not (cancel is not None and cancel.cancelled):
        # Writing would state an answer the evidence does not hold; the reader is told so and sees the evidence.
        return answers.digest(plan, f"The model read the {len(reading.judged)} sentences closest to answering and "
                              "judged that none answers the question, so Quire writes no answer.",
                              model=lm.model_id, lead=NOT_ANSWERED)
    try:
        outcome = write_draft(used, lm, chosen, reading.evidence,
                              PassageTools(retrieve, scorer, hit_text, search_while_writing), options,
                              Callbacks(on_token, stage, cancel))
    except (ContextTooSmall, GenerationError) as exc:
        log.warning("writing failed (%s); answering with the evidence digest", exc)
        return answers.digest(plan, f"The model could not write this answer ({exc}); showing the evidence instead.",
                              model=lm.model_id)
    except Cancelled:
        return answers.cancelled(model=lm.model_id)
    clock.lap("writing")
    stage("verifying")
    given.update({e.reference.n: e.reference for e in outcome.extra})
    if outcome.cancelled:  # what was written before the Stop is kept unjudged (steps.unchecked_draft)
        sentences, headings = unchecked_draft(outcome)
        return answers.cancelled(sentences, list(given.values()), model=lm.model_id, steps=tuple(outcome.steps),
                                 sections=headings)
    # A Stop that comes while verifying ends verification early.
    # A model able to judge also reads the sentences the cross-encoder leaves unsupported (support_reader).
    reader = SupportReader(lm) if options.judge_answers and options.read_unsupported and isinstance(lm, ScoresReplies) \
        else None
    # Where a read is cheap (a GPU), the model reads every sentence, not only the doubtful ones.
    veto = reader.vetoes if reader is not None and reads_every_sentence(
        bool(getattr(lm, "offloaded", False)), measured_read_seconds(lm)) else None
    sentences, headings, report = verify_draft(outcome, given, Verifier(scorer, rects_for, reader=reader, veto=veto,
                                                                       cancel=cancel))
    clock.lap("verifying")
    if outcome.cancelled:
        return answers.cancelled(sentences, list(given.values()), model=lm.model_id, steps=tuple(outcome.steps),
                                 sections=headings)
    reason = fallback_reason(sentences, used, plan.first, reading, lm, scorer, options)
    if reason:
        return answers.digest(plan, reason, outcome.steps, lm.model_id)
    return answers.written(sentences, headings, plan, written_notice(answers.notice, outcome, report, scorer),
                           outcome.steps, lm.model_id)


def _text(hit: SearchHit, hit_text: HitText | None) -> str:
    return hit_text(hit) if hit_text else hit.text


NOT_ANSWERED = ("No passage found states an answer to this question. The passages closest to it follow; "
                "try other words, or add papers that study it.")


def _nothing(found: Sequence[Evidence], datastores: bool) -> dict[str, Any]:
    """The plain "nothing addresses this" answer; the closest passages come along as contexts."""
    text = ("None of the passages found in your library" + (" or the attached datastores" if datastores else "") +
            " addresses this question, so there is no answer to give. The closest passages are listed below; "
            "try other words, or add papers on the topic.")
    return {"text": text, "sentences": (AnswerSentence(text, needs_citation=False, supported=True),),
            "references": (), "contexts": tuple(replace(e.reference, n=0) for e in closest(found))}


def _numbered(sentences: Sequence[AnswerSentence], given: Sequence[Reference], digest: bool = False) -> dict[str, Any]:
    """The Answer fields that depend on numbering: references numbered by paper in order of first use."""
    numbered = number_by_paper(sentences, given)
    return {"text": answer_text(numbered.sentences, digest=digest), "sentences": numbered.sentences,
            "references": numbered.references, "contexts": numbered.contexts, "papers": numbered.papers}


__all__ = ["NOT_ANSWERED", "AskOptions", "Question", "Theme", "ask", "normalise_question"]
