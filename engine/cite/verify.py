"""Verify an LM's answer against the passages it was given: drop, insert, flag.

For each sentence: numbers that name no passage given to the model are removed (invented);
each remaining citation is judged against its passage by the support judge
(:mod:`engine.cite.judge`): ``supported`` keeps it (the deciding window becomes the verbatim
quote), ``partial`` keeps it and marks the sentence partially supported, ``contradicted`` removes
it and lists the passage in ``AnswerSentence.contradictions`` (a source says the opposite),
``unsupported`` removes it. A citation-worthy sentence left without a citation gets the passage
the judge finds ``supported`` (best score), and nothing otherwise. ``AnswerSentence.support`` is
the sentence's verdict. A ``reader`` (a capable language model, see
:mod:`engine.synthesis.support_reader`) gets a second look at a sentence the judge left unsupported:
it reads the sentence against the cited passages, then the judge's best other ones, at most
``READER_PASSAGES`` of them, and a passage it reads as supporting the sentence is cited as
``supported``. It may overrule the judge's model, never a deterministic check (a number or a "not"
the passage does not share). Where reading is cheap (a GPU) a ``veto`` reads every passage the judge
supports too, and a citation it reads as silent on the sentence is dropped. When the shipped judge
cannot be loaded, the model's citations are kept as written and marked ``unchecked``. Without a judge
by choice (``SupportScorer(judge=None)``, for measurements) the similarity scorer's thresholds decide.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from engine.cite.judge import Judgement, Reader, SupportJudge, revisable
from engine.cite.markers import cited_numbers, find_markers, format_marker, strip_markers
from engine.cite.readings import abbreviations
from engine.cite.sentences import Span, split_spans
from engine.cite.support import SupportScorer
from engine.cite.windows import content_words, overlap
from engine.progress import CancelToken
from engine.tuning import CITATION
from engine.types import AnswerSentence, Citation, PageRect, Reference

UNCHECKED = "unchecked"  # no judge could be loaded: a citation shown as written, never called supported
RectsFor = Callable[[str, int, int], tuple[PageRect, ...]]  # (passage id, start, end) -> boxes
# (sentence, passage) -> True when a capable reader reads the passage as not saying the sentence
Veto = Callable[[str, str], bool]
READER_PASSAGES = CITATION.reader_passages  # per unsupported sentence: each read costs seconds on a CPU


# A list item's number or bullet opening a sentence ("1. A syntactic constraint ..."): shown, never judged.
_ITEM = re.compile(r"^\s*(?:\(?\d{1,2}[.)]|[-*•])\s+")


def item_and_claim(sentence: str) -> tuple[str, str]:
    """(the list item's number or bullet, the claim judged): "1. X [2]." -> ("1. ", "X.")."""
    claim = strip_markers(sentence)
    item = _ITEM.match(claim)
    return (item.group(0).lstrip(), claim[item.end():]) if item else ("", claim)


def no_rects(_passage_id: str, _start: int, _end: int) -> tuple[PageRect, ...]:
    return ()


@dataclass(frozen=True)
class Verifier:
    """How sentences are checked, fixed for one text: the scorer (and the judge it holds), where a quote
    lies on its page, whether an uncited sentence may get the passage that best supports it, the reader's
    second look and its veto (see the module docstring), and the Stop that ends a text's checking early."""

    scorer: SupportScorer
    rects_for: RectsFor = no_rects
    insert: bool = True
    reader: Reader | None = None
    veto: Veto | None = None
    cancel: CancelToken | None = None


@dataclass
class VerifyReport:
    """What verification changed, for the benchmarks and the answer's notice."""

    invented: int = 0  # numbers naming no passage given to the model
    dropped: int = 0  # citations to a real passage that does not support the sentence
    inserted: int = 0
    kept: int = 0
    unsupported: list[str] = field(default_factory=list)
    partial: int = 0  # sentences whose main clause is supported but not an added clause
    contradicted: int = 0  # citations removed because their passage says the opposite
    unchecked: int = 0  # sentences left unjudged because the support judge could not be loaded
    read: int = 0  # sentences the judge left unsupported that the reader found supported
    hollow: int = 0  # sentences dropped because nothing was left of them without their markers


def needs_citation(claim: str) -> bool:
    """Headings, list labels and short connective sentences need no citation."""
    stripped = claim.strip()
    if not stripped or stripped.startswith("#") or stripped.endswith(":"):
        return False
    return len(content_words(stripped)) >= 3


# The word before a marker that stands as a noun of the sentence: "described in [1] and [2]", "see [3]".
_MARKER_AS_WORD = re.compile(r"(?:\b(?:in|by|of|see|from|to|with|as|than|and|or|cf|e\.g|i\.e)[.,]?|,)\s*$",
                             re.IGNORECASE)


def hollow(sentence: str) -> bool:
    """Whether the sentence says nothing once its markers are removed: they stood as its words ("This is
    described in [1] and [2]." leaves "This is described in and.") and what remains is no claim. Such a
    sentence is dropped; kept, it would read as broken and pass as a connective sentence needing no source."""
    markers = find_markers(sentence)
    if not any(_MARKER_AS_WORD.search(sentence, 0, marker.start) for marker in markers):
        return False
    claim = item_and_claim(sentence)[1].strip()
    return not needs_citation(claim) and not claim.endswith(":") and not claim.startswith("#")


def claims_something(sentence: str, claim: str) -> bool:
    """Whether the sentence needs a source: a claim with content, or any sentence the writer cited that is
    not a heading or a lead-in. A cited sentence is never taken for a connective one, called supported with
    no passage behind it."""
    stripped = claim.strip()
    if needs_citation(stripped):
        return True
    return bool(cited_numbers(sentence)) and bool(stripped) and not stripped.endswith(":") \
        and not stripped.startswith("#")


def quote_citation(reference: Reference, start: int, end: int, score: float, rects_for: RectsFor,
                   inserted: bool = False, verdict: str = "supported") -> Citation:
    """A citation whose quote is ``reference.text[start:end]`` (verbatim by construction)."""
    return Citation(n=reference.n, passage_id=reference.passage_id, quote=reference.text[start:end],
                    quote_start=start, quote_end=end, support=round(score, 4),
                    rects=rects_for(reference.passage_id, start, end), inserted=inserted, verdict=verdict)


def verify_sentence(sentence: str, sources: Mapping[int, Reference], verifier: Verifier, section: int = 0,
                    report: VerifyReport | None = None, aliases: Mapping[str, str] | None = None) -> AnswerSentence:
    """Check one sentence's citations; return it with only supported, verified citations. ``aliases``
    are the abbreviations the sources define (computed from ``sources`` when not given); the verifier's
    ``reader`` gives sentences the judge finds unsupported a second look (see the module docstring); with
    its ``veto`` (reading is cheap: a GPU) the reader also reads each passage the judge finds supporting, and a
    citation stands only where it does not read the passage as not saying the sentence."""
    report = report if report is not None else VerifyReport()
    scorer, rects_for, insert = verifier.scorer, verifier.rects_for, verifier.insert
    judge = scorer.support_judge()
    if judge is not None:
        if aliases is None:
            aliases = abbreviations(r.text for r in sources.values())
        return _judged_sentence(sentence, sources, judge, verifier, section, report, aliases)
    if scorer.judge_problem:
        return _unchecked_sentence(sentence, sources, verifier, section, report)
    claim = strip_markers(sentence)
    worthy = claims_something(sentence, claim)
    citations: list[Citation] = []
    for n in cited_numbers(sentence):
        reference = sources.get(n)
        if reference is None:
            report.invented += 1
            continue
        match = scorer.best(claim, reference.text) if worthy else None
        if match is None or match.score < scorer.threshold:
            report.dropped += 1
            continue
        citations.append(quote_citation(reference, match.start, match.end, match.score, rects_for))
    if not citations and worthy and insert and sources:
        best: tuple[float, Reference, int, int] | None = None
        for reference in sources.values():
            match = scorer.best(claim, reference.text)
            if match is not None and (best is None or match.score > best[0]):
                best = (match.score, reference, match.start, match.end)
        if best is not None and best[0] >= scorer.insert_threshold:
            citations.append(quote_citation(best[1], best[2], best[3], best[0], rects_for, inserted=True))
            report.inserted += 1
    report.kept += sum(not c.inserted for c in citations)
    if worthy and not citations:
        report.unsupported.append(claim)
    text = _with_marker(claim, [c.n for c in citations])
    supported = bool(citations) or not worthy
    return AnswerSentence(text=text, citations=tuple(citations), supported=supported, section=section,
                          needs_citation=worthy, support="supported" if supported else "unsupported")


def _cited(sentence: str, sources: Mapping[int, Reference], report: VerifyReport) -> list[Reference]:
    """The passages the sentence's markers name; a number naming no passage given counts as invented."""
    cited: list[Reference] = []
    for n in cited_numbers(sentence):
        reference = sources.get(n)
        if reference is None:
            report.invented += 1
        else:
            cited.append(reference)
    return cited


def _needs_no_citation(claim: str, section: int) -> AnswerSentence:
    return AnswerSentence(text=claim.strip(), supported=True, section=section, needs_citation=False,
                          support="supported")


def _judged_sentence(sentence: str, sources: Mapping[int, Reference], judge: SupportJudge, verifier: Verifier,
                     section: int, report: VerifyReport, aliases: Mapping[str, str]) -> AnswerSentence:
    """verify_sentence with the support judge deciding (see the module docstring)."""
    rects_for, reader, veto = verifier.rects_for, verifier.reader, verifier.veto
    item, claim = item_and_claim(sentence)
    if not claims_something(sentence, claim):
        return _needs_no_citation(item + claim, section)
    cited = _cited(sentence, sources, report)
    judged = judge.judge_many([(claim, r.text) for r in cited], aliases=aliases)
    citations: list[Citation] = []
    contradictions: list[Citation] = []
    # With a cheap reader its verdict is the one shown: a passage the judge finds supporting is cited only
    # when the reader does not read it as silent on the sentence (the judge's checks vetoed what they see).
    confirmed = (lambda reference: not veto(claim, reference.text)) if veto is not None \
        else (lambda _reference: True)
    for reference, judgement in zip(cited, judged, strict=True):
        if judgement.verdict in ("supported", "partial") and not confirmed(reference):
            report.dropped += 1
        elif judgement.verdict in ("supported", "partial"):
            citations.append(_citation(reference, judgement, rects_for))
        else:
            report.dropped += 1
            if judgement.verdict == "contradicted":
                report.contradicted += 1
                contradictions.append(_citation(reference, judgement, rects_for))
    others_judged: list[tuple[Reference, Judgement]] = []
    if not any(c.verdict == "supported" for c in citations) and verifier.insert and sources:
        others = [r for r in sources.values() if r.passage_id not in {c.passage_id for c in citations}]
        best: tuple[Judgement, Reference] | None = None
        others_judged = list(zip(others, judge.judge_many([(claim, r.text) for r in others], aliases=aliases),
                                 strict=True))
        for reference, judgement in others_judged:
            if judgement.verdict == "supported" and (best is None or judgement.score > best[0].score) \
                    and confirmed(reference):
                best = (judgement, reference)
            elif judgement.verdict == "contradicted" and reference.passage_id not in {
                    c.passage_id for c in contradictions} and about_the_same(claim, judgement.quote):
                contradictions.append(_citation(reference, judgement, rects_for))
        if best is not None:
            citations.append(_citation(best[1], best[0], rects_for, inserted=True))
            report.inserted += 1
    if reader is not None and not citations:
        read = _second_look(claim, list(zip(cited, judged, strict=True)), others_judged, reader, rects_for)
        if read is not None:
            citations.append(read)
            contradictions = [c for c in contradictions if c.passage_id != read.passage_id]
            report.read += 1
            report.inserted += int(read.inserted)
    report.kept += sum(not c.inserted for c in citations)
    verdicts = {c.verdict for c in citations}
    support = ("supported" if "supported" in verdicts else "partial" if "partial" in verdicts
               else "contradicted" if contradictions else "unsupported")
    if support == "partial":
        report.partial += 1
    if not citations:
        report.unsupported.append(claim)
    return AnswerSentence(text=item + _with_marker(claim, [c.n for c in citations]), citations=tuple(citations),
                          supported=bool(citations), section=section, needs_citation=True, support=support,
                          contradictions=tuple(contradictions))


# A name in a sentence: a word with a capital or a digit after its first letter ("S2ORC", "SPECTER", "PubMed",
# "IL-6"), not a capitalised first word.
_NAME = re.compile(r"\b[A-Za-z][\w-]*[A-Z0-9][\w-]*")
# The share of an unnamed sentence's content words a passage it does not cite must hold to be listed against it.
OTHER_PASSAGE_TOPIC = 1 / 3


def about_the_same(claim: str, window: str) -> bool:
    """Whether a passage the sentence does not cite is about what the sentence says, so that its "refutes"
    can be shown against it: it names one of the sentence's names, or for a sentence that names nothing, it
    holds a third of its content words. The six-layer model reads "refutes" in windows about something else
    ("S2ORC spans papers from many fields of research" struck through by a passage on vitamin D and T cells);
    a passage the sentence cites is judged as it is."""
    names = {m.group().lower() for m in _NAME.finditer(claim)}
    if names:
        return any(name in window.lower() for name in names)
    return overlap(content_words(claim), content_words(window)) >= OTHER_PASSAGE_TOPIC


def _second_look(claim: str, cited: list[tuple[Reference, Judgement]], others: list[tuple[Reference, Judgement]],
                 reader: Reader, rects_for: RectsFor) -> Citation | None:
    """The first passage the reader finds supporting ``claim``: the cited ones first (the writer chose them),
    then the others the judge scored highest. Only passages whose verdict came from the judge's model are
    read (it misreads loose paraphrase as "not stated" and even as "says otherwise"); one where a check
    found a clash anywhere in it (a number or a "not" it does not share) is not."""
    ranked = cited + sorted(others, key=lambda item: -item[1].score)
    # Lazily: the checks run over each whole passage, and only the first READER_PASSAGES are read.
    readable = ((ref, judgement) for ref, judgement in ranked if revisable(claim, ref.text, judgement))
    for reference, judgement in itertools.islice(readable, READER_PASSAGES):
        score = reader(claim, reference.text)
        if score is not None:
            inserted = all(reference is not r for r, _ in cited)
            return quote_citation(reference, judgement.start, judgement.end, score, rects_for, inserted)
    return None


def _unchecked_sentence(sentence: str, sources: Mapping[int, Reference], verifier: Verifier, section: int,
                        report: VerifyReport) -> AnswerSentence:
    """The sentence with the citations the model wrote (to passages it was given), each marked "not
    checked": without the judge nothing is called supported. The quote is the passage's window most
    similar to the sentence, so a click still lands near the cited text."""
    claim = strip_markers(sentence)
    if not claims_something(sentence, claim):
        return _needs_no_citation(claim, section)
    citations: list[Citation] = []
    for reference in _cited(sentence, sources, report):
        match = verifier.scorer.best(claim, reference.text)
        start, end = (match.start, match.end) if match is not None else (0, min(len(reference.text), 300))
        citations.append(quote_citation(reference, start, end, 0.0, verifier.rects_for, verdict=UNCHECKED))
    report.unchecked += 1
    return AnswerSentence(text=_with_marker(claim, [c.n for c in citations]), citations=tuple(citations),
                          supported=False, section=section, needs_citation=True, support=UNCHECKED)


def _citation(reference: Reference, judgement: Judgement, rects_for: RectsFor, inserted: bool = False) -> Citation:
    score = judgement.contradiction if judgement.verdict == "contradicted" else judgement.score
    return quote_citation(reference, judgement.start, judgement.end, score, rects_for, inserted, judgement.verdict)


def verify_text(text: str, sources: Mapping[int, Reference], verifier: Verifier, section: int = 0,
                report: VerifyReport | None = None) -> list[AnswerSentence]:
    """Split ``text`` into sentences and verify each (with a judge, every window is judged in one batch).

    When the verifier's ``cancel`` is set, the sentences verified so far are returned: a user who stops an
    answer while it is being checked waits for one batch of the judge at most, not the whole text.
    """
    spans = split_spans(text)
    judge = verifier.scorer.support_judge()
    cancel = verifier.cancel

    def stopped() -> bool:
        return cancel is not None and cancel.cancelled

    aliases = abbreviations(r.text for r in sources.values()) if judge is not None else {}
    if judge is not None and not stopped():
        _prefetch(text, spans, sources, judge, verifier.insert, stopped, aliases)
    verified: list[AnswerSentence] = []
    for span in spans:
        if stopped():
            break
        if hollow(text[span.start:span.end]):
            if report is not None:
                report.hollow += 1
            continue
        verified.append(verify_sentence(text[span.start:span.end], sources, verifier, section, report, aliases))
    return verified


def _prefetch(text: str, spans: list[Span], sources: Mapping[int, Reference], judge: SupportJudge,
              insert: bool, stopped: Callable[[], bool], aliases: Mapping[str, str]) -> None:
    """Judge the whole text in two batches (cited passages; then, for sentences none of them supports,
    the other passages), so that the sentence-by-sentence pass below finds every verdict cached."""
    sentences = [text[span.start:span.end] for span in spans]
    claims = [item_and_claim(sentence)[1] for sentence in sentences]
    worthy = [claims_something(sentence, claim) and not hollow(sentence)
              for sentence, claim in zip(sentences, claims, strict=True)]
    cited = [[sources[n] for n in cited_numbers(sentence) if n in sources] for sentence in sentences]
    first = [(claim, ref.text) for claim, refs, needed in zip(claims, cited, worthy, strict=True) if needed
             for ref in refs]
    verdicts = dict(zip(first, judge.judge_many(first, aliases=aliases), strict=True))
    if not insert or stopped():
        return
    second: list[tuple[str, str]] = []
    for claim, refs, needed in zip(claims, cited, worthy, strict=True):
        if needed and not any(verdicts[(claim, ref.text)].supports for ref in refs):
            second.extend((claim, ref.text) for ref in sources.values() if ref not in refs)
    judge.judge_many(second, aliases=aliases)


def _with_marker(claim: str, numbers: list[int]) -> str:
    """Put the marker before the sentence's final punctuation: "A claim [1, 2]."."""
    marker = format_marker(numbers)
    if not marker:
        return claim
    body = claim.rstrip()
    tail = ""
    while body and body[-1] in ".!?;:":
        tail = body[-1] + tail
        body = body[:-1]
    return f"{body.rstrip()} {marker}{tail}"
