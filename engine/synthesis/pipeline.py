"""ask(question): retrieve -> evidence -> direct answer + plan -> write (or digest) -> verify -> Answer.

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
evidence.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.cite.markers import strip_markers
from engine.cite.sentences import split_spans
from engine.cite.support import SupportScorer
from engine.cite.verify import UNCHECKED, RectsFor, VerifyReport, no_rects, verify_text
from engine.errors import Cancelled, GenerationError, QueryError
from engine.generate.base import LanguageModel, TokenCallback
from engine.progress import CancelToken
from engine.retrieve.fts import readable_text
from engine.synthesis.answer_judge import (
    answers_as_well,
    bonuses,
    can_judge,
    judge_candidates,
    none_answers,
)
from engine.synthesis.digest import ANSWER_HEADING, digest_sentences, with_evidence
from engine.synthesis.evidence import (
    PER_PAPER,
    RELATIVE_RELEVANCE,
    RELEVANCE_THRESHOLD,
    TABLE_PER_PAPER,
    TABLE_RELATIVE_RELEVANCE,
    Evidence,
    best_answer,
    closest,
    diverse,
    extract_evidence,
    relevant,
    rescored,
    to_reference,
)
from engine.synthesis.numbering import number_by_paper
from engine.synthesis.plan import Theme, plan_themes
from engine.synthesis.table import by_paper, table_rows
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
    top_n: int = 12  # odd half: key passage cited 85.7 % with 8 passages, 90.5 % with 12
    mode: str = "auto"  # "auto": write, fall back to the digest if the draft fails verification
    feedback: bool = False  # self-feedback and one revision: two more LM calls (see write.py)
    quotes_per_passage: int = 2
    max_themes: int = 3
    relevance_threshold: float = RELEVANCE_THRESHOLD
    relative_relevance: float = RELATIVE_RELEVANCE
    per_paper: int = PER_PAPER
    min_supported: float = 0.5  # auto mode: share of citation-worthy sentences that must survive
    feedback_k: int = 2  # passages retrieved per feedback query
    table: bool = False  # a row per paper instead of an answer (engine.synthesis.table)
    # The model reads the best candidate sentences and says which answer (engine.synthesis.answer_judge);
    # off for models too small to read well (the service decides).
    judge_answers: bool = True
    writer: WriterOptions = field(default_factory=WriterOptions)

    def as_pairs(self) -> tuple[tuple[str, str], ...]:
        return (("top_n", str(self.top_n)), ("mode", self.mode), ("feedback", str(self.feedback)),
                ("quotes_per_passage", str(self.quotes_per_passage)), ("max_themes", str(self.max_themes)),
                ("relevance_threshold", str(self.relevance_threshold)),
                ("relative_relevance", str(self.relative_relevance)), ("per_paper", str(self.per_paper)),
                ("min_supported", str(self.min_supported)), ("judge_answers", str(self.judge_answers)))


def normalise_question(question: str) -> tuple[str, str]:
    """The question as used (whitespace collapsed, at most MAX_QUESTION_CHARS, undecodable characters
    replaced) and a notice saying what was changed, if anything."""
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
    return cleaned, " ".join(notices)


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
    question = readable_text(question)  # stored in the history, which SQLite must be able to encode
    base = {"question": question if len(question) <= MAX_QUESTION_CHARS else used, "settings": options.as_pairs(),
            "id": uuid.uuid4().hex[:16], "created_at": time.time()}

    def cancelled(sentences: Sequence[AnswerSentence] = (), refs: Sequence[Reference] = (), **extra: object) -> Answer:
        return Answer(**_numbered(sentences, refs), mode=AnswerMode.WRITTEN, cancelled=True,
                      notice="Cancelled; what was written so far is kept.", timings=clock.done(),
                      **base, **extra)  # type: ignore[arg-type]

    stage("retrieving")
    try:
        # A table compares papers, so it reads at most TABLE_PER_PAPER passages of one. With a cap,
        # three times the passages are searched, so that after it there are still top_n.
        per_paper = TABLE_PER_PAPER if options.table else options.per_paper
        hits = diverse(retrieve(used, options.top_n * (3 if per_paper > 0 else 1)), options.top_n, per_paper)
    except Cancelled:
        return cancelled()
    clock.lap("retrieving")
    if cancel is not None and cancel.cancelled:
        return cancelled()
    references = [to_reference(h, i + 1, hit_text(h) if hit_text else None) for i, h in enumerate(hits)]
    found = extract_evidence(used, references, scorer, options.quotes_per_passage, [h.is_reference for h in hits])
    # A table compares papers: it keeps papers further from the best one than an answer does.
    relative = TABLE_RELATIVE_RELEVANCE if options.table else options.relative_relevance
    evidence = relevant(found, options.relevance_threshold, relative)
    clock.lap("evidence")
    if not evidence:
        return Answer(**_nothing(found, any(not h.is_library for h in hits)), mode=AnswerMode.NO_EVIDENCE,
                      notice=notice, timings=clock.done(), **base)  # type: ignore[arg-type]
    given = {e.reference.n: e.reference for e in evidence}
    lm = language_model() if language_model is not None and options.mode != "digest" else None
    if options.table:
        return _table(used, evidence, given, scorer, lm, rects_for, on_token, cancel, clock, notice, base)
    judged: dict[tuple[int, int], float] = {}  # (n, start) -> the model's P(Yes) that the sentence answers
    unanswered = False
    if lm is not None and options.judge_answers and can_judge(lm):
        stage("judging")
        judged = judge_candidates(lm, used, evidence, cancel)
        unanswered = none_answers(judged, evidence)  # the library most likely does not hold the answer
        evidence = rescored(evidence, bonuses(judged), options.quotes_per_passage)
        clock.lap("judging")
    direct = best_answer(evidence)
    themes = plan_themes(used, evidence, scorer, options.max_themes)
    clock.lap("planning")

    def digest(reason: str, steps: Sequence[StepCost] = (), model: str = "", lead: str = "") -> Answer:
        sentences, headings = digest_sentences(direct, themes, given, rects_for, lead)
        return Answer(**_numbered(sentences, list(given.values()), digest=True), mode=AnswerMode.DIGEST,
                      sections=headings, notice=" ".join(x for x in (notice, reason) if x), timings=clock.done(),
                      steps=tuple(steps), model=model, **base)  # type: ignore[arg-type]

    if lm is None:
        return digest("" if options.mode == "digest" else "No language model is available; showing the evidence.")
    if unanswered and options.mode == "auto" and not (cancel is not None and cancel.cancelled):
        # Writing would state an answer the evidence does not hold; the reader is told so and sees the evidence.
        return digest(f"The model read the {len(judged)} sentences closest to answering and judged that none "
                      "answers the question, so Quire writes no answer.", model=lm.model_id, lead=NOT_ANSWERED)
    writer = Writer(lm, replace(options.writer, feedback=options.feedback), on_token, stage, cancel)

    def more(query: str) -> list[Evidence]:
        known = {r.passage_id for r in references}
        fresh = [h for h in retrieve(query, options.feedback_k + 2) if h.passage_id not in known][: options.feedback_k]
        start = max(r.n for r in references) + 1
        new_refs = [to_reference(h, start + i, hit_text(h) if hit_text else None) for i, h in enumerate(fresh)]
        references.extend(new_refs)
        return relevant(extract_evidence(used, new_refs, scorer, options.quotes_per_passage),
                        options.relevance_threshold)

    try:
        outcome = writer.write(used, [q for e in evidence for q in e.quotes], {n: r.title for n, r in given.items()},
                               more)
    except (ContextTooSmall, GenerationError) as exc:
        log.warning("writing failed (%s); answering with the evidence digest", exc)
        return digest(f"The model could not write this answer ({exc}); showing the evidence instead.",
                      model=lm.model_id)
    except Cancelled:
        return cancelled(model=lm.model_id)
    clock.lap("writing")
    stage("verifying")
    given.update({e.reference.n: e.reference for e in outcome.extra})
    if outcome.cancelled:
        # Judging the text written before a Stop took as long as writing more of it (the judge may be
        # the model itself), so it is kept as written, every sentence marked not checked.
        sentences, headings = _unchecked(outcome)
        return cancelled(sentences, list(given.values()), model=lm.model_id, steps=tuple(outcome.steps),
                         sections=headings)
    # A Stop that comes while verifying ends verification early.
    sentences, headings, report = _verify(outcome, scorer, given, rects_for, cancel)
    clock.lap("verifying")
    if outcome.cancelled:
        return cancelled(sentences, list(given.values()), model=lm.model_id, steps=tuple(outcome.steps),
                         sections=headings)
    if scorer.judge_problem and options.mode == "auto":
        return digest(f"The written answer cannot be checked ({scorer.judge_problem}), so Quire shows the "
                      "evidence itself.", outcome.steps, lm.model_id)
    worthy = [s for s in sentences if s.needs_citation]
    supported = sum(s.supported for s in worthy)
    direct_held = any(s.supported and s.citations for s in sentences if s.section == 0)
    if options.mode == "auto" and (not direct_held or not worthy or supported < options.min_supported * len(worthy)):
        return digest(f"The model's draft did not hold up against the sources ({supported} of {len(worthy)} "
                      "sentences supported, the direct answer " + ("among them" if direct_held else "not") +
                      "), so Quire shows the evidence itself.", outcome.steps, lm.model_id)
    first = next((s for s in sentences if s.section == 0), None)
    if options.mode == "auto" and options.judge_answers and direct is not None and first is not None and \
            not answers_as_well(lm, used, strip_markers(first.text), direct.text, judged.get((direct.n, direct.start))):
        return digest("The model's answer did not answer the question as well as the best quote, so Quire shows "
                      "the evidence itself.", outcome.steps, lm.model_id)
    sentences, headings = with_evidence(sentences, headings, direct, themes, given, rects_for)
    parts = [notice, outcome.trimmed and f"Note: {outcome.trimmed}."]
    if report.unchecked:
        parts.append(f"Citations are not checked ({scorer.judge_problem}); they are shown as the model wrote them.")
    if report.invented or report.dropped:
        parts.append(f"Verification removed {_count(report.invented + report.dropped, 'citation')} the sources "
                     "do not back.")
    if report.unsupported:
        parts.append(f"{_count(len(report.unsupported), 'sentence')} could not be matched to a source and "
                     f"{'is' if len(report.unsupported) == 1 else 'are'} marked.")
    return Answer(**_numbered(sentences, list(given.values())), mode=AnswerMode.WRITTEN, sections=headings,
                  notice=" ".join(p for p in parts if p), timings=clock.done(), steps=tuple(outcome.steps),
                  model=lm.model_id, **base)  # type: ignore[arg-type]


def _table(question: str, evidence: Sequence[Evidence], given: dict[int, Reference], scorer: SupportScorer,
           lm: LanguageModel | None, rects_for: RectsFor, on_token: TokenCallback | None, cancel: CancelToken | None,
           clock: _Clock, notice: str, base: dict[str, Any]) -> Answer:
    """A row per paper (section = row): see engine.synthesis.table."""
    try:
        sentences, headings, steps = table_rows(question, by_paper(evidence), given, scorer, lm, rects_for, on_token,
                                                cancel)
    except (GenerationError, Cancelled) as exc:  # a row without a written sentence keeps its quote
        log.warning("writing the table failed (%s); rows show quotes", exc)
        sentences, headings, steps = table_rows(question, by_paper(evidence), given, scorer, None, rects_for)
    written = any(not s.text.startswith("“") for s in sentences)
    return Answer(**_numbered(sentences, list(given.values()), digest=True),
                  mode=AnswerMode.WRITTEN if written else AnswerMode.DIGEST, sections=headings, notice=notice,
                  timings=clock.done(), steps=tuple(steps), model=lm.model_id if lm is not None else "",
                  **{**base, "settings": (*base["settings"], ("table", "True"))})


NOT_ANSWERED = ("No passage found states an answer to this question. The passages closest to it follow; "
                "try other words, or add papers that study it.")


def _nothing(found: Sequence[Evidence], datastores: bool) -> dict[str, Any]:
    """The plain "nothing addresses this" answer; the closest passages come along as contexts."""
    text = ("None of the passages found in your library" + (" or the attached datastores" if datastores else "") +
            " addresses this question, so there is no answer to give. The closest passages are listed below; "
            "try other words, or add papers on the topic.")
    return {"text": text, "sentences": (AnswerSentence(text, needs_citation=False, supported=True),),
            "references": (), "contexts": tuple(replace(e.reference, n=0) for e in closest(found))}


def _verify(outcome: WriteOutcome, scorer: SupportScorer, given: dict[int, Reference], rects_for: RectsFor,
            cancel: CancelToken | None = None) -> tuple[list[AnswerSentence], tuple[str, ...], VerifyReport]:
    """Every written sentence verified; section 0 is the direct answer, then the model's headed sections.

    Cancelling stops between judge batches; what was verified by then is kept and the outcome is
    marked cancelled (unverified text is never shown as if it had been checked)."""
    report = VerifyReport()
    written = outcome.written
    sentences = (verify_text(written.direct, given, scorer, rects_for, True, 0, report, cancel)
                 if written.direct else [])
    headings = [ANSWER_HEADING]
    for title, text in written.sections:
        if cancel is not None and cancel.cancelled:
            break
        verified = verify_text(text, given, scorer, rects_for, True, len(headings), report, cancel)
        if verified:
            sentences.extend(verified)
            headings.append(title or "Details")
    if cancel is not None and cancel.cancelled:
        outcome.cancelled = True
    return sentences, tuple(headings), report


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _unchecked(outcome: WriteOutcome) -> tuple[list[AnswerSentence], tuple[str, ...]]:
    """The text written so far, sentence by sentence, without its markers and marked not checked."""
    written = outcome.written
    sections = [("", written.direct), *written.sections]
    sentences: list[AnswerSentence] = []
    headings = [ANSWER_HEADING]
    for index, (title, text) in enumerate(sections):
        claims = [strip_markers(text[span.start:span.end]).strip() for span in split_spans(text)]
        claims = [claim for claim in claims if claim]
        if not claims:
            continue
        if index:
            headings.append(title or "Details")
        section = len(headings) - 1
        sentences.extend(AnswerSentence(claim, supported=False, section=section, support=UNCHECKED)
                         for claim in claims)
    return sentences, tuple(headings)


def _numbered(sentences: Sequence[AnswerSentence], given: Sequence[Reference], digest: bool = False) -> dict[str, Any]:
    """The Answer fields that depend on numbering: references numbered by paper in order of first use."""
    numbered = number_by_paper(sentences, given)
    return {"text": answer_text(numbered.sentences, digest=digest), "sentences": numbered.sentences,
            "references": numbered.references, "contexts": numbered.contexts, "papers": numbered.papers}


__all__ = ["AskOptions", "Theme", "ask", "normalise_question"]
