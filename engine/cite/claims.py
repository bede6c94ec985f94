"""Check a claim: against passages found by search, against given evidence, or in pairs.

The input rules live here so that the CLI, the app and the benchmark treat bad input alike:
an empty claim or evidence is refused (:class:`ClaimError`); a claim longer than
``MAX_CLAIM_CHARS`` is cut at a word boundary and the cut is reported; a question is judged as the
statement it asks about, with a note (a question asserts nothing, so its verdict means "does the
passage state this?"); evidence that is not English is judged too, with a note, since the judge
reads English only and will rarely find support in it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from engine.cite.checks import check
from engine.cite.judge import (
    NOT_STATED,
    READ_SUPPORTED,
    SAYS_OTHERWISE,
    Judgement,
    Reader,
    SupportJudge,
    on_topic,
    revisable,
)
from engine.cite.support import SupportScorer
from engine.cite.windows import content_words, not_prose
from engine.errors import ClaimError
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.text.artefacts import as_shown
from engine.text.back_matter import asks_about_back_matter, back_matter_flags
from engine.text.names import mentioned, names
from engine.text.sentences import split_sentences
from engine.text.stopwords import COMMON_ENGLISH_WORDS
from engine.text.tokens import LETTERS, WORD, lower_words
from engine.types import SearchHit

MAX_CLAIM_CHARS = 1000  # a claim is a sentence or two; the judge reads ~160 tokens of claim and evidence
MAX_EVIDENCE_CHARS = 20000
CLOSEST_SHOWN = 3  # passages shown as read when none supports or contradicts a claim
NOT_STATED_HERE = "not stated here"  # how a passage that neither supports nor contradicts a claim is labelled
UNNAMED = "the passage and its paper do not name"  # why a found passage silent on the claim's name is no support

SearchFn = Callable[[str, int, ProgressCallback, CancelToken | None], Sequence[SearchHit]]
# The window of a found passage nearest the claim, as (closeness, start, end); None for a passage with no prose.
Nearness = Callable[[str, SearchHit], "tuple[float, int, int] | None"]


@dataclass(frozen=True)
class CheckedPassage:
    """One passage judged against the claim, with the quote that decided its verdict."""

    verdict: str
    score: float
    contradiction: float
    quote: str
    quote_start: int
    quote_end: int
    passage_id: str
    doc_id: str
    source: str
    title: str
    page: int | None
    reason: str = ""
    closeness: float = 0.0  # how near the passage comes to the claim (its nearest window), when measured

    @property
    def shown_quote(self) -> str:
        """The quote as a reader sees it: footnote numbers glued to its words left out (the span stays)."""
        return as_shown(self.quote)


@dataclass(frozen=True)
class ClaimCheck:
    """What search found for a claim: the passages judged, strongest support first."""

    claim: str
    passages: tuple[CheckedPassage, ...]
    notes: tuple[str, ...] = ()

    @property
    def supporting(self) -> list[CheckedPassage]:
        return [p for p in self.passages if p.verdict in ("supported", "partial")]

    @property
    def contradicting(self) -> list[CheckedPassage]:
        return [p for p in self.passages if p.verdict == "contradicted"]

    def closest(self, count: int = CLOSEST_SHOWN) -> list[CheckedPassage]:
        """When no passage supports or contradicts the claim, the ``count`` read passages nearest to it
        (the order they are listed in): what a researcher checks to see that the library does not say it;
        else []."""
        if self.supporting or self.contradicting:
            return []
        return [p for p in self.passages if p.verdict == "unsupported"][:count]


@dataclass(frozen=True)
class PairVerdict:
    """The verdict on one (claim, evidence) pair, with notes on how the input was read."""

    judgement: Judgement
    notes: tuple[str, ...] = field(default=())


def prepare_claim(claim: str, what: str = "claim") -> tuple[str, list[str]]:
    """The claim as judged (whitespace collapsed, cut when too long) and notes for the user."""
    text = " ".join((claim or "").split())
    if not text:
        raise ClaimError(f"The {what} is empty; give a sentence to check, e.g. quire check \"BM25 outperforms "
                         "dense retrieval on BEIR\".")
    if not LETTERS.search(text):
        raise ClaimError(f"The {what} has no words in it ({text[:40]!r}); give a sentence to check.")
    notes = []
    text, repeated = without_repeats(text)
    if repeated:
        # The six-layer judge reads a claim that says one sentence twice as supported by nearly any passage
        # ("Rotavirus codes proteins. Rotavirus codes proteins.": 14 of 20 unrelated passages, P up to 0.94).
        notes.append(f"the {what} repeats a sentence; each sentence was judged once")
    if len(text) > MAX_CLAIM_CHARS:
        cut = text.rfind(" ", 0, MAX_CLAIM_CHARS)
        text = text[: cut if cut > MAX_CLAIM_CHARS // 2 else MAX_CLAIM_CHARS]
        notes.append(f"the {what} was {len(' '.join(claim.split())):,} characters; only its first "
                     f"{len(text):,} were judged (check one or two sentences at a time)")
    if text.endswith("?"):
        notes.append(f"the {what} is a question; it was judged as the statement it asks about "
                     "(a question asserts nothing, so write the claim itself for a clearer verdict)")
    return text, notes


def without_repeats(text: str) -> tuple[str, bool]:
    """``text`` with each of its sentences kept once (case aside), and whether any was repeated."""
    sentences = [sentence.strip() for sentence in split_sentences(text) if sentence.strip()]
    first: dict[str, str] = {}
    for sentence in sentences:
        first.setdefault(sentence.lower(), sentence)
    kept = list(first.values())
    return (" ".join(kept), True) if len(kept) < len(sentences) else (text, False)


def prepare_evidence(evidence: str) -> tuple[str, list[str]]:
    """The evidence as judged and notes (cut when huge, flagged when not English)."""
    text = (evidence or "").strip()
    if not text:
        raise ClaimError("The evidence is empty; give the passage text to judge the claim against.")
    notes = []
    if len(text) > MAX_EVIDENCE_CHARS:
        text = text[:MAX_EVIDENCE_CHARS]
        notes.append(f"the evidence was cut to its first {MAX_EVIDENCE_CHARS:,} characters")
    if not looks_english(text):
        notes.append("the evidence does not look like English; the judge reads English only, so it will rarely "
                     "find support in it (translate it, or check against the original-language claim by hand)")
    return text, notes


def looks_english(text: str) -> bool:
    """Mostly Latin letters with common English function words among them."""
    words = lower_words(text, LETTERS)
    if len(words) < 4:
        return all(w.isascii() for w in words)
    latin = sum(w.isascii() for w in words) / len(words)
    function = sum(w in COMMON_ENGLISH_WORDS for w in words) / len(words)
    return latin >= 0.8 and function >= 0.08


def judge_pair(judge: SupportJudge, claim: str, evidence: str, reader: Reader | None = None) -> PairVerdict:
    """One claim against one piece of evidence."""
    return judge_pairs(judge, [(claim, evidence)], reader)[0]


def judge_pairs(judge: SupportJudge, pairs: Sequence[tuple[str, str]], reader: Reader | None = None,
                ) -> list[PairVerdict]:
    """Many (claim, evidence) pairs in one batch; raises ClaimError on the first unusable pair
    (callers that must go on past bad pairs validate each with prepare_claim/prepare_evidence first).
    A ``reader`` (a capable language model) reads again each pair whose verdict the judge's model alone
    decided against support (:func:`engine.cite.judge.revisable`)."""
    prepared = []
    for claim, evidence in pairs:
        claim_text, claim_notes = prepare_claim(claim)
        evidence_text, evidence_notes = prepare_evidence(evidence)
        prepared.append((claim_text, evidence_text, tuple(claim_notes + evidence_notes)))
    judgements = judge.judge_many([(c, e) for c, e, _ in prepared], whole=True)
    if reader is not None:
        judgements = [_read_again(c, e, j, reader) for j, (c, e, _) in zip(judgements, prepared, strict=True)]
    return [PairVerdict(j, notes) for j, (_, _, notes) in zip(judgements, prepared, strict=True)]


def _read_again(claim: str, evidence: str, judgement: Judgement, reader: Reader) -> Judgement:
    if not revisable(claim, evidence, judgement):
        return judgement
    score = reader(claim, evidence)
    if score is None:
        return judgement
    return replace(judgement, verdict="supported", score=round(score, 4), reason=READ_SUPPORTED)


def check_claim(claim: str, search: SearchFn, judge: SupportJudge, k: int = 20,
                progress: ProgressCallback = no_progress, cancel: CancelToken | None = None,
                nearness: Nearness | None = None) -> ClaimCheck:
    """Search for the claim and judge each passage found: supporting ones first, then contradicting ones, then
    the rest, nearest the claim first when ``nearness`` measures it (else in search's order)."""
    text, notes = prepare_claim(claim)
    progress(Progress("searching", 0, 2, "searching for passages about the claim"))
    hits = list(search(text, k, progress, cancel))
    if cancel is not None:
        cancel.check()
    progress(Progress("judging", 1, 2, f"judging {len(hits)} passages"))
    judgements = judge.judge_passages(text, [hit.text for hit in hits])
    passages = against_its_own_support([found_passage(text, hit, j) for hit, j in zip(hits, judgements, strict=True)])
    if nearness is not None:  # measured only where it is shown: the passages that say nothing either way
        passages = [nearest_shown(text, p, nearness(text, hit), hit.text) if p.verdict == "unsupported" else p
                    for p, hit in zip(passages, hits, strict=True)]
    order = {"supported": 0, "partial": 1, "contradicted": 2, "unsupported": 3}
    # Passages that say nothing either way are ranked by how near they come to the claim, not by P(supports),
    # which is near zero for all of them and ranks noise; without a measure they keep search's order (the sort
    # is stable).
    passages.sort(key=lambda p: (order[p.verdict], -(p.contradiction if p.verdict == "contradicted" else
                                                      p.closeness if p.verdict == "unsupported" else p.score)))
    progress(Progress("judging", 2, 2, "done"))
    if not any(p.verdict in ("supported", "partial", "contradicted") for p in passages):
        unused = words_not_found(text, [hit.text for hit in hits])
        if unused and hits:
            notes.append(f"no passage found names {', '.join(unused)}: the library may not cover this (check the "
                         "spelling, or add papers on it)")
    return ClaimCheck(text, tuple(passages), tuple(notes))


def on_quote_pages(result: ClaimCheck, quote_page: Callable[[CheckedPassage], int | None]) -> ClaimCheck:
    """The result with each passage's page the page its quote is on (``quote_page``; None keeps the passage's
    first page): a passage that runs over a page break is cited where its quote is, as the app shows it."""
    passages = []
    for passage in result.passages:
        page = quote_page(passage) if passage.page is not None and passage.quote else None
        passages.append(replace(passage, page=page) if page is not None else passage)
    return replace(result, passages=tuple(passages))


def words_not_found(claim: str, texts: Sequence[str]) -> list[str]:
    """The claim's names (words written with a capital: "Rotavirus", "Java", "S2ORC") that none of ``texts`` uses
    in any form: with nothing for or against a claim, its closest passages may be on another subject altogether
    ("Rotavirus codes for six non-structural proteins." against biology papers without rotavirus showed Protein
    Data Bank sentences, on "code" and "protein"), and a name the passages never use says so where closeness
    cannot. A plain word missing ("contains" where the passage says "holds") says nothing about the subject."""
    used = set().union(*(content_words(text) for text in texts)) if texts else set()
    unused: list[str] = []
    for word in WORD.findall(claim):
        stems = content_words(word)
        if any(c.isupper() for c in word) and stems and stems.isdisjoint(used) and word not in unused:
            unused.append(word)
    return unused


def found_passage(claim: str, hit: SearchHit, judgement: Judgement) -> CheckedPassage:
    """A passage search found, with its verdict. Search finds passages on the claim's subject, and the judge's
    model reads many of them as refuting a short claim ("CiteSee is a mobile app.": 18 of 20 passages on
    CiteSee, "The front-end of CiteSee was built on the open-source ScholarPhi codebase." among them). Its
    contradiction of a found passage stands only where the quote is on what the claim says (``on_topic``);
    a clash a check found (a number, a "not", a direction) stands as the judge gave it."""
    verdict, reason = judgement.verdict, judgement.reason
    if verdict == "contradicted" and reason == SAYS_OTHERWISE and not on_topic(claim, judgement.quote):
        verdict, reason = "unsupported", NOT_STATED
    score = judgement.score
    if verdict in ("supported", "partial") and (unnamed := unnamed_in(claim, hit)):
        verdict, reason, score = "unsupported", f"{UNNAMED} {unnamed[0]}", 0.0
    return CheckedPassage(verdict, score, judgement.contradiction, judgement.quote, judgement.start,
                          judgement.end, hit.passage_id, hit.doc_id, hit.source, hit.bib.title, hit.page, reason)


def unnamed_in(claim: str, hit: SearchHit) -> list[str]:
    """The names the claim gives (SPECTER, S2ORC, IL-6: engine.text.names) that neither the passage nor its
    paper's title mentions. A passage search found on the claim's topic is no support for what the claim says of
    a thing it never names: "SPECTER is trained with a cross-entropy classification loss." was supported (P 0.99)
    by a datastore paper titled "Cross-Entropy Loss Leads To Poor Margins", on the loss and never on SPECTER."""
    where = [hit.text, hit.bib.title or ""]
    return [name for name in names(claim) if not mentioned(name, where)]


def against_its_own_support(passages: Sequence[CheckedPassage]) -> list[CheckedPassage]:
    """The passages, a contradiction the judge's model alone found (no check found a clash) taken back where another
    passage of the same paper supports the claim. A paper seldom says a thing and its opposite, and the six-layer
    model reads "same subject, another statement" as refuting: "MapReduce re-executes the tasks of a failed
    worker." was supported by one MapReduce passage and contradicted by four others ("When a MapReduce operation
    is close to completion, the master schedules backup executions of the remaining in-progress tasks.", P 0.86)
    that each hold enough of its words to count as on topic (benchmarks/check_contradicted.py)."""
    supported_by = {(p.source, p.doc_id) for p in passages if p.verdict == "supported"}
    return [replace(p, verdict="unsupported", reason=NOT_STATED)
            if p.verdict == "contradicted" and p.reason == SAYS_OTHERWISE and (p.source, p.doc_id) in supported_by
            else p for p in passages]


def nearness_by(scorer: SupportScorer) -> Nearness:
    """How near a found passage comes to a claim: its sentence the support scorer ranks first against it
    (embedding cosine and shared content words), read as part of its paper: the title's words count as in
    every sentence, since a passage on SPECTER's training says "To train our model, ...". Thanks and funding
    are never the sentence shown unless the claim is about them, nor a table or an equation run together into
    one "sentence" (benchmarks/check_closest.py)."""
    def nearest(claim: str, hit: SearchHit) -> tuple[float, int, int] | None:
        ranked = scorer.rank(claim, hit.text, pairs=False, about=hit.bib.title)
        hidden = [False] * len(ranked) if asks_about_back_matter(claim) else \
            back_matter_flags(hit.text, [(m.start, m.end) for m in ranked])
        return next(((m.score, m.start, m.end) for m, back_matter in zip(ranked, hidden, strict=True)
                     if not back_matter and not not_prose(hit.text[m.start:m.end])), None)
    return nearest


def nearest_shown(claim: str, passage: CheckedPassage, nearest: tuple[float, int, int] | None,
                  text: str) -> CheckedPassage:
    """A passage that neither supports nor contradicts the claim, shown with its sentence nearest the claim.
    The judge's quote for it is the window it found likeliest to support the claim, and with every window
    unlikely that is noise ("{'window': [5, 10, 15], ...}" for "SPECTER is trained on 10 million PubMed
    abstracts."); a researcher checking that the library does not say it wants to read what it says instead.
    The reason shown is the one the checks give for that sentence (a number it lacks, a "not"), else that
    the passage does not state the claim."""
    if nearest is None:
        return passage
    closeness, start, end = nearest
    problem = check(claim, text[start:end])
    reason = passage.reason if passage.reason.startswith(UNNAMED) else NOT_STATED if problem is None else \
        problem.reason
    return replace(passage, closeness=closeness, quote=text[start:end], quote_start=start, quote_end=end,
                   reason=reason)
