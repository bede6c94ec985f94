"""The steps of answering, each usable (and tested) alone: retrieve -> choose evidence (the model reads
the candidates) -> write -> verify -> fall back. engine.synthesis.pipeline.ask runs them in order and
turns what they return into an Answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from engine.cite.markers import strip_markers
from engine.cite.sentences import split_spans
from engine.cite.support import SupportScorer
from engine.cite.verify import UNCHECKED, Verifier, VerifyReport, verify_text
from engine.generate.base import LanguageModel, TokenCallback
from engine.progress import CancelToken
from engine.synthesis.answer_judge import answers_as_well, bonuses, judge_candidates, none_answers
from engine.synthesis.digest import ANSWER_HEADING
from engine.synthesis.evidence import (
    Evidence,
    Quote,
    diverse,
    extract_evidence,
    relevant,
    rescored,
    to_reference,
)
from engine.synthesis.options import AskOptions
from engine.synthesis.ralm import Found, RetrievingWriter
from engine.synthesis.write import StageCallback, WriteOutcome, Writer
from engine.types import AnswerSentence, Reference, SearchHit

Retrieve = Callable[[str, int], list[SearchHit]]  # (query, k) -> ranked hits
HitText = Callable[[SearchHit], str]  # the passage text quotes are cut from (library: as stored)


@dataclass(frozen=True)
class PassageTools:
    """What the steps find and weigh passages with: the search, the support scorer, and the stored text
    of a hit (None: the hit's own text)."""

    retrieve: Retrieve
    scorer: SupportScorer
    hit_text: HitText | None = None
    search_while_writing: Retrieve | None = None  # retrieval while writing's search (None: ``retrieve``)


@dataclass(frozen=True)
class Callbacks:
    """Who hears an answer being made, and the Stop: the draft's tokens, the stage names, the cancel token."""

    on_token: TokenCallback | None = None
    on_stage: StageCallback | None = None
    cancel: CancelToken | None = None


def retrieve_passages(question: str, retrieve: Retrieve, options: AskOptions) -> list[SearchHit]:
    """The ``top_n`` passages an answer is made from, at most ``per_paper`` of one paper."""
    # With a cap, three times the passages are searched, so that after it there are still top_n.
    per_paper = options.per_paper
    return diverse(retrieve(question, options.top_n * (3 if per_paper > 0 else 1)), options.top_n, per_paper)


@dataclass
class Chosen:
    """What the retrieved passages offer: every one numbered (feedback passages are appended later),
    each one's best quotes, and those that address the question."""

    references: list[Reference]
    found: list[Evidence]
    evidence: list[Evidence]


def choose_evidence(question: str, hits: Sequence[SearchHit], scorer: SupportScorer, options: AskOptions,
                    hit_text: HitText | None = None) -> Chosen:
    """Number the hits, cut their best quotes, and keep the passages that address the question."""
    references = [to_reference(h, i + 1, hit_text(h) if hit_text else None) for i, h in enumerate(hits)]
    found = extract_evidence(question, references, scorer, options.quotes_per_passage, [h.is_reference for h in hits])
    return Chosen(references, found, relevant(found, options.relevance_threshold, options.relative_relevance))


@dataclass(frozen=True)
class Reading:
    """The evidence after the model read the candidate sentences: rescored by its verdicts
    (``judged``: (n, start) -> P(Yes) that the sentence answers), and whether none answers."""

    evidence: list[Evidence]
    judged: Mapping[tuple[int, int], float]
    unanswered: bool


def read_candidates(lm: LanguageModel, question: str, evidence: list[Evidence], options: AskOptions,
                    cancel: CancelToken | None = None) -> Reading:
    """The model judges the sentences closest to answering; they gain or lose score by its verdict."""
    judged = judge_candidates(lm, question, evidence, cancel)
    return Reading(rescored(evidence, bonuses(judged), options.quotes_per_passage), judged,
                   none_answers(judged, evidence))  # True: the library most likely does not hold the answer


def found_while_writing(question: str, references: list[Reference], search: Retrieve, scorer: SupportScorer,
                        options: AskOptions, hit_text: HitText | None = None) -> Found:
    """What a search while writing finds, as evidence: a passage already numbered keeps its number, a new one
    takes the next free number (and joins ``references``), so no written [n] ever changes meaning. Quotes are
    chosen for the question, as for the first search, once per passage."""
    chosen: dict[int, list[Evidence]] = {}

    def find(query: str) -> list[Evidence]:
        known = {r.passage_id: r for r in references}
        numbered: list[Reference] = []
        for hit in search(query, options.while_writing.passages):
            reference = known.get(hit.passage_id)
            if reference is None:
                reference = to_reference(hit, max((r.n for r in references), default=0) + 1,
                                         hit_text(hit) if hit_text else None)
                references.append(reference)
                known[hit.passage_id] = reference
            numbered.append(reference)
        unread = [r for r in numbered if r.n not in chosen]
        for reference, item in zip(unread, extract_evidence(question, unread, scorer, options.quotes_per_passage),
                                   strict=True):
            chosen[reference.n] = [item]
        return relevant([chosen[r.n][0] for r in numbered], options.relevance_threshold)

    return find


def write_draft(question: str, lm: LanguageModel, chosen: Chosen, evidence: Sequence[Evidence],
                tools: PassageTools, options: AskOptions, callbacks: Callbacks | None = None) -> WriteOutcome:
    """The model's draft from the evidence's quotes, each paper named by its title; with feedback, the
    passages its feedback queries find are numbered after ``chosen.references`` (and appended to them).
    With retrieval while writing (``options.while_writing``), ``tools.search_while_writing`` (else
    ``tools.retrieve``) finds the passages swapped in as the draft goes, numbered the same way; feedback is
    not run then. Raises what the writer raises."""
    retrieve, scorer, hit_text = tools.retrieve, tools.scorer, tools.hit_text
    callbacks = callbacks or Callbacks()
    references = chosen.references
    quotes: list[Quote] = [q for e in evidence for q in e.quotes]
    # The papers are those of the chosen evidence; feedback's passages are numbered after them.
    titles = {e.reference.n: e.reference.bib.title for e in chosen.evidence}
    if options.while_writing.on:
        find = found_while_writing(question, references, tools.search_while_writing or retrieve, scorer, options,
                                   hit_text)
        return RetrievingWriter(lm, options.writer, options.while_writing, find, callbacks.on_token,
                                callbacks.on_stage, callbacks.cancel).write(question, quotes, titles)
    writer = Writer(lm, replace(options.writer, feedback=options.feedback), callbacks.on_token,
                    callbacks.on_stage or (lambda _s: None), callbacks.cancel)

    def more(query: str) -> list[Evidence]:
        known = {r.passage_id for r in references}
        fresh = [h for h in retrieve(query, options.feedback_k + 2) if h.passage_id not in known][: options.feedback_k]
        start = max(r.n for r in references) + 1
        new_refs = [to_reference(h, start + i, hit_text(h) if hit_text else None) for i, h in enumerate(fresh)]
        references.extend(new_refs)
        return relevant(extract_evidence(question, new_refs, scorer, options.quotes_per_passage),
                        options.relevance_threshold)

    return writer.write(question, quotes, titles, more)


def verify_draft(outcome: WriteOutcome, given: dict[int, Reference], verifier: Verifier,
                 ) -> tuple[list[AnswerSentence], tuple[str, ...], VerifyReport]:
    """Every written sentence verified; section 0 is the direct answer, then the model's headed sections.
    The verifier's ``reader`` gives the sentences the judge leaves unsupported a second look
    (engine.cite.verify), and with its ``veto`` (a cheap reader) reads every sentence the judge supports too.

    Cancelling stops between judge batches; what was verified by then is kept and the outcome is
    marked cancelled (unverified text is never shown as if it had been checked)."""
    report = VerifyReport()
    written = outcome.written
    cancel = verifier.cancel
    sentences = verify_text(written.direct, given, verifier, 0, report) if written.direct else []
    headings = [ANSWER_HEADING]
    for title, text in written.sections:
        if cancel is not None and cancel.cancelled:
            break
        verified = verify_text(text, given, verifier, len(headings), report)
        if verified:
            sentences.extend(verified)
            headings.append(title or "Details")
    if cancel is not None and cancel.cancelled:
        outcome.cancelled = True
    return sentences, tuple(headings), report


def unchecked_draft(outcome: WriteOutcome) -> tuple[list[AnswerSentence], tuple[str, ...]]:
    """The text written before a Stop, sentence by sentence, without its markers and marked not checked.

    Judging it took as long as writing more (the judge may be the model itself), so a Stop would
    otherwise wait tens of seconds; it is kept as written and never shown as if it had been checked."""
    written = outcome.written
    sentences: list[AnswerSentence] = []
    headings = [ANSWER_HEADING]
    for index, (title, text) in enumerate([("", written.direct), *written.sections]):
        claims = [strip_markers(text[span.start:span.end]).strip() for span in split_spans(text)]
        claims = [claim for claim in claims if claim]
        if not claims:
            continue
        if index:
            headings.append(title or "Details")
        sentences.extend(AnswerSentence(claim, supported=False, section=len(headings) - 1, support=UNCHECKED)
                         for claim in claims)
    return sentences, tuple(headings)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def fallback_reason(sentences: Sequence[AnswerSentence], question: str, direct: Quote | None,
                    reading: Reading, lm: LanguageModel, scorer: SupportScorer, options: AskOptions) -> str:
    """Why the verified draft gives way to the evidence digest ("auto" mode only); "" when it stands."""
    if options.mode != "auto":
        return ""
    if scorer.judge_problem:
        return (f"The written answer cannot be checked ({scorer.judge_problem}), so Quire shows the evidence "
                "itself.")
    worthy = [s for s in sentences if s.needs_citation]
    supported = sum(s.supported for s in worthy)
    direct_held = any(s.supported and s.citations for s in sentences if s.section == 0)
    if not direct_held or not worthy or supported < options.min_supported * len(worthy):
        return (f"The model's draft did not hold up against the sources ({supported} of {len(worthy)} "
                "sentences supported, the direct answer " + ("among them" if direct_held else "not") +
                "), so Quire shows the evidence itself.")
    first = next((s for s in sentences if s.section == 0), None)
    if options.judge_answers and direct is not None and first is not None and not answers_as_well(
            lm, question, strip_markers(first.text), direct.text, reading.judged.get((direct.n, direct.start))):
        return ("The model's answer did not answer the question as well as the best quote, so Quire shows the "
                "evidence itself.")
    return ""


def written_notice(notice: str, outcome: WriteOutcome, report: VerifyReport, scorer: SupportScorer) -> str:
    """What the reader of a written answer is told: the question's notice, trimming, and what verification did."""
    parts = [notice, outcome.trimmed and f"Note: {outcome.trimmed}."]
    if report.unchecked:
        parts.append(f"Citations are not checked ({scorer.judge_problem}); they are shown as the model wrote them.")
    if report.invented or report.dropped:
        parts.append(f"Verification removed {_count(report.invented + report.dropped, 'citation')} the sources "
                     "do not back.")
    if report.hollow:
        parts.append(f"{_count(report.hollow, 'sentence')} that said nothing without its citation markers "
                     f"{'was' if report.hollow == 1 else 'were'} left out.")
    if report.unsupported:
        parts.append(f"{_count(len(report.unsupported), 'sentence')} could not be matched to a source and "
                     f"{'is' if len(report.unsupported) == 1 else 'are'} marked.")
    return " ".join(p for p in parts if p)


__all__ = ["Callbacks", "Chosen", "HitText", "PassageTools", "Reading", "Retrieve", "choose_evidence",
           "fallback_reason", "found_while_writing", "read_candidates", "retrieve_passages", "unchecked_draft",
           "verify_draft", "write_draft", "written_notice"]
