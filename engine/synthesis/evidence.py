"""Evidence: the passages that address the question, and their sentences that best answer it. No LM.

Every passage is cut into whole sentences (never mid-sentence, never a figure or table caption,
never a sentence that runs into one). Each sentence gets two scores against the question:

- ``topic``: the support scorer's mix of embedding cosine and shared content words, i.e. how much
  it is *about* the question; a passage's best ``topic`` is its relevance, and passages well below
  the best passage (or below an absolute floor) do not address the question and are dropped;
- ``answer``: how well the sentence *answers* the question. With the answer reader (a cross-encoder
  trained on experts' questions over scientific full text, engine/cite/reader.py) it is the reader's
  score of the sentence in its context plus the hand-weighted score below at a measured weight,
  squashed to 0..1. Without the reader it is the hand-weighted score alone: ``topic`` plus what
  answering takes for this kind of question (a number for "how many", a name the question does not
  contain for "which"), minus a little for length.

The best-answering sentence overall opens the answer; each passage's best sentences are its quotes.
All quotes are spans of the passage text, so they are verbatim by construction.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.cite.reader import neighbours, reader_text
from engine.cite.support import SupportScorer
from engine.cite.windows import content_words, overlap
from engine.synthesis.question import (
    Question,
    QuestionKind,
    analyse,
    asks,
    asks_about_questions,
    is_question,
    new_names,
    quantities,
    states_counted,
    with_typos_matched,
)
from engine.synthesis.quotable import quotable_spans
from engine.text.back_matter import answers_back_matter_question, asks_about_back_matter
from engine.text.table_rows import asked_cells
from engine.tuning import SYNTHESIS
from engine.types import LIBRARY_SOURCE, Reference, SearchHit

# The measured constants: what each does and where it was measured is in engine/tuning.py.
RELEVANCE_THRESHOLD = SYNTHESIS.relevance_threshold
RELATIVE_RELEVANCE = SYNTHESIS.relative_relevance
TABLE_RELATIVE_RELEVANCE = SYNTHESIS.table_relative_relevance
NUMBER_BONUS = SYNTHESIS.number_bonus
NAME_BONUS = SYNTHESIS.name_bonus
COUNTED_BONUS = SYNTHESIS.counted_bonus
RANK_PENALTY = SYNTHESIS.rank_penalty
LENGTH_PENALTY = SYNTHESIS.length_penalty
TOPIC_COSINE_WEIGHT = SYNTHESIS.topic_cosine_weight

SECOND_QUOTE_SHARE = SYNTHESIS.second_quote_share
# Sentences the answer reader reads, those with the best hand-weighted scores (measured: engine/tuning.py).
ANSWER_READ_LIMIT = SYNTHESIS.answer_read_limit
# Passages of one paper an answer reads (0: no cap; measured: engine/tuning.py).
PER_PAPER = SYNTHESIS.per_paper

# A sentence that opens by pointing back to the one before it: read alone, it does not say what it is about.
_POINTS_BACK = re.compile(r"(?:This|These|Those|It|Its|They|Their|Such|The latter|The former)\s")
# The direct answer with the sentence it leans on stays this short (about four lines of a reading pane).
CONTEXT_CHARS = 400


@dataclass(frozen=True)
class Quote:
    """A verbatim span of reference ``n``'s text, scored for topic and for answering."""

    n: int
    start: int
    end: int
    text: str
    score: float  # topic
    answer: float = 0.0
    ask: int = 0  # which of the question's asks (engine/synthesis/question.py ``asks``) it answers best
    # Of a table row quoted whole for a question that names some of its cells: the spans of the row's name and
    # of those cells, which its citation outlines (engine.text.table_rows.asked_cells).
    cells: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Evidence:
    """One numbered passage, its best quotes (reading order) and its relevance (best topic score)."""

    reference: Reference
    quotes: tuple[Quote, ...]
    relevance: float
    is_reference_list: bool = False
    rank: int = 1
    sentences: tuple[Quote, ...] = ()  # every quotable sentence, scored: where the quotes were chosen from

    @property
    def quotes_by_score(self) -> tuple[Quote, ...]:
        return tuple(sorted(self.quotes, key=lambda q: -q.answer))

    @property
    def best(self) -> Quote | None:
        return max(self.quotes, key=lambda q: q.answer, default=None)


def to_reference(hit: SearchHit, n: int, text: str | None = None) -> Reference:
    """Number a search hit. ``text`` replaces the hit's text (the library passage as stored)."""
    return Reference(n=n, passage_id=hit.passage_id, doc_id=hit.doc_id, source=hit.source, bib=hit.bib,
                     text=hit.text if text is None else text, page=hit.page, page_end=hit.page_end)


def diverse(hits: Sequence[SearchHit], top_n: int, per_paper: int = PER_PAPER) -> list[SearchHit]:
    """The first ``top_n`` hits with at most ``per_paper`` passages of any one paper (rank order kept)."""
    kept: list[SearchHit] = []
    count: dict[tuple[str, str], int] = {}
    for hit in hits:
        key = (hit.source, hit.doc_id)
        if count.get(key, 0) < per_paper or per_paper <= 0:
            count[key] = count.get(key, 0) + 1
            kept.append(hit)
        if len(kept) >= top_n:
            break
    return kept


def answer_bonus(text: str, question: Question) -> float:
    """What a sentence gains for carrying what this kind of question asks for."""
    if question.kind == QuestionKind.QUANTITY and quantities(text):
        return NUMBER_BONUS + (COUNTED_BONUS if states_counted(text, question) else 0.0)
    if question.kind in (QuestionKind.CHOICE, QuestionKind.QUANTITY) and new_names(text, question):
        return NAME_BONUS
    return 0.0


def hand_scores(question: str, texts: Sequence[str], scorer: SupportScorer) -> np.ndarray:
    """The hand-weighted answer score of each sentence: topic + question-type bonus - length penalty."""
    return _scores(question, texts, scorer)[1]


def answer_scores(read: np.ndarray, hand: np.ndarray, hand_weight: float) -> np.ndarray:
    """The reader's score with the hand-weighted score added at ``hand_weight`` (fitted: reader.json)."""
    return read + hand_weight * hand


def _scores(question: str, texts: Sequence[str], scorer: SupportScorer) -> tuple[np.ndarray, np.ndarray]:
    """Each sentence's topic score and hand-weighted answer score."""
    if not texts:
        return np.zeros(0), np.zeros(0)
    asked = with_typos_matched(analyse(question), {w for t in texts for w in content_words(t)})
    cosines = scorer.vectors(list(texts)) @ scorer.vectors([" ".join(question.split())])[0]
    topics = np.array([TOPIC_COSINE_WEIGHT * float(cosine) + (1 - TOPIC_COSINE_WEIGHT) *
                       overlap(set(asked.terms), content_words(without_cited_years(text)))
                       for cosine, text in zip(cosines, texts, strict=True)])
    hands = np.array([topic + answer_bonus(text, asked) - LENGTH_PENALTY * max(0, len(text) - 200) / 100
                      for topic, text in zip(topics, texts, strict=True)])
    return topics, hands


# The year of an author-year citation: "(Cohan et al., 2018)", "Wang and Cho, 2019", "Lo et al. (2020)".
_CITED_YEAR = re.compile(r"(?:\bet\s+al\.?,?\s*\(?|\b[A-Z][\w'’-]+,\s+"
                         r"|\b[A-Z][\w'’-]+\s+(?:and|&)\s+[A-Z][\w'’-]+,?\s+)((?:19|20)\d{2})[a-z]?\b")


def without_cited_years(sentence: str) -> str:
    """``sentence`` with the years of its author-year citations blanked: a cited work's year is not what the
    sentence is about, and "Who won the 2018 football world cup?" shared only "2018" with "(2) PubMed (Cohan et
    al., 2018) is a summarization dataset ...", which then passed for a passage that addresses it."""
    return _CITED_YEAR.sub(lambda m: m.group(0)[:m.start(1) - m.start(0)], sentence)


def _squash(score: float) -> float:
    """A reader score as 0..1, so that shares of the best score (second quotes, themes) keep their meaning."""
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, score))))


def extract_evidence(question: str, references: Sequence[Reference], scorer: SupportScorer,
                     quotes_per_passage: int = 2, reference_lists: Sequence[bool] = (), read: bool = True,
                     read_limit: int | None = None) -> list[Evidence]:
    """Each passage's best ``quotes_per_passage`` sentences for answering ``question``, passages in input order.
    ``read``: False leaves the answer reader out (when only the passages' relevance is wanted);
    ``read_limit``: the reader reads only the sentences with the best hand-weighted scores (the rest
    rank after them), where the reader's time per sentence matters more than a rare miss. None: an answer's
    limit, ``ANSWER_READ_LIMIT``, looked up at each call so that a benchmark can set it."""
    back_matter_asked = asks_about_back_matter(question)
    questions_answer = asks_about_questions(question)
    found = [quotable_spans(r, back_matter_asked) for r in references]
    spans = [(r, start, end) for r, passage in zip(references, found, strict=True) for start, end, _ in passage]
    texts = [r.text[start:end] for r, start, end in spans]
    # A question about funding or thanks is answered by back matter of that kind and by nothing else; the reader,
    # trained on questions about findings, scores such sentences low, so they rank before every other sentence.
    answers_by_kind = [back_matter_asked and answers_back_matter_question(question, text, flag)
                       for text, flag in zip(texts, (flag for passage in found for _, _, flag in passage),
                                             strict=True)]
    cell_rows = [asked_cells(question, reference.text) if reference.source == LIBRARY_SOURCE else ()
                 for reference in references]
    topics, hands = _scores(question, texts, scorer)
    reader = scorer.answer_reader() if spans and read else None
    combined, ask_of = None, np.zeros(len(spans), dtype=int)
    if reader is not None:
        limit = ANSWER_READ_LIMIT if read_limit is None else read_limit
        # A question that asks two things is read as two questions: read against the whole, the sentence that
        # half-answers the second part ("Since our algorithm is trained on data from the citation graph, we
        # compare to ...") outscored the one that answers the first. Each ask has its own hand score (the topic
        # of "How is SPECTER trained?" is not the whole's) and reads its share of the limit, its best by that
        # score, so that a question costs the same time however many things it asks. A sentence's score is
        # that of the ask it answers best.
        asked = asks(question)
        by_ask = np.full((len(asked), len(spans)), -np.inf, dtype=np.float32)
        for index, ask in enumerate(asked):
            ask_hands = hands if len(asked) == 1 else _scores(ask, texts, scorer)[1]
            chosen = sorted(np.argsort(-ask_hands, kind="stable")[:max(1, limit // len(asked))].tolist())
            logits = np.full(len(spans), -np.inf, dtype=np.float32)
            logits[chosen] = reader.scores(ask, [reader_text(texts[i], *neighbours(spans[i][0].text, spans[i][1]))
                                               for i in chosen])
            by_ask[index] = answer_scores(logits, ask_hands, reader.hand_weight)
        combined, ask_of = by_ask.max(axis=0), by_ask.argmax(axis=0)
    evidence = []
    position = 0
    for index, (reference, passage) in enumerate(zip(references, found, strict=True)):
        prior = RANK_PENALTY * math.log(index + 1)
        scored = []
        for start, end, _ in passage:
            if combined is None:
                answer = float(hands[position]) - prior
            else:  # a sentence the reader did not read ranks after every one it read
                answer = _squash(float(combined[position]) - prior) if np.isfinite(combined[position]) else 0.0
            if not questions_answer and is_question(texts[position]):
                answer = 0.0  # a question states no answer (unless the question asks what a paper asks)
            if answers_by_kind[position]:
                answer += 1.0  # above every sentence that is not of the asked kind (answer scores are 0..1)
            if cell_rows[index]:
                answer += 1.0  # the row whose cell the question names, above every sentence about the topic
            # Not rounded: a squashed score over ~10 rounds to 1.0 at 4 places, and the tie then went to
            # whichever passage came first, not to the sentence that answers best.
            cells = tuple(cell for cell in cell_rows[index] if start <= cell[0] and cell[1] <= end)
            scored.append(Quote(reference.n, start, end, reference.text[start:end], round(float(topics[position]), 4),
                                answer, int(ask_of[position]), cells))
            position += 1
        relevance = max((q.score for q in scored), default=0.0)
        if cell_rows[index]:
            # A row of header words and numbers shares little wording with the question, but it holds the cell
            # asked for: it addresses the question whatever its topic score.
            relevance = max(relevance, RELEVANCE_THRESHOLD)
        is_list = reference_lists[index] if index < len(reference_lists) else False
        evidence.append(Evidence(reference, choose_quotes(scored, quotes_per_passage), relevance, is_list, index + 1,
                                 tuple(scored)))
    return evidence


def choose_quotes(scored: Sequence[Quote], quotes_per_passage: int) -> tuple[Quote, ...]:
    """A passage's best-answering sentences (a second only when it comes near the first), in reading order."""
    chosen: list[Quote] = []
    for quote in sorted(scored, key=lambda q: -q.answer):
        if len(chosen) >= quotes_per_passage or (chosen and quote.answer < SECOND_QUOTE_SHARE * chosen[0].answer):
            break
        chosen.append(quote)
    return tuple(sorted(chosen, key=lambda q: q.start))  # reading order within the passage


def rescored(evidence: Sequence[Evidence], bonus: Mapping[tuple[int, int], float],
             quotes_per_passage: int = 2) -> list[Evidence]:
    """The evidence with ``bonus[(n, start)]`` added to those sentences' answer scores and each passage's
    quotes chosen again: a sentence a closer reading found to answer can become a quote it was not."""
    if not bonus:
        return list(evidence)
    updated = []
    for item in evidence:
        sentences = tuple(replace(q, answer=q.answer + bonus.get((q.n, q.start), 0.0))
                          for q in item.sentences or item.quotes)
        updated.append(replace(item, quotes=choose_quotes(sentences, quotes_per_passage), sentences=sentences))
    return updated


def relevant(evidence: Sequence[Evidence], threshold: float = RELEVANCE_THRESHOLD,
             relative: float = RELATIVE_RELEVANCE) -> list[Evidence]:
    """The passages that address the question, reference lists last: over the floor, from a paper whose best
    passage comes near the best passage of all. The paper decides, not the passage: the sentence that
    answers a specific question often shares few words with it, but its paper's other passages do."""
    paper_best: dict[tuple[str, str], float] = {}
    for item in evidence:
        if item.quotes and not item.is_reference_list:
            key = (item.reference.source, item.reference.doc_id)
            paper_best[key] = max(paper_best.get(key, 0.0), item.relevance)
    best = max(paper_best.values(), default=0.0)
    kept = [e for e in evidence if e.quotes and e.relevance >= threshold
            and paper_best.get((e.reference.source, e.reference.doc_id), 0.0) >= max(threshold, relative * best)]
    return sorted(kept, key=lambda e: e.is_reference_list)


def closest(evidence: Sequence[Evidence], count: int = 3) -> list[Evidence]:
    """The passages nearest the question when none addresses it (shown, not written from)."""
    return sorted((e for e in evidence if e.quotes), key=lambda e: -e.relevance)[:count]


def direct_answers(evidence: Sequence[Evidence]) -> tuple[Quote, ...]:
    """The sentence that best answers each of the question's asks, in the order asked (one for a question
    that asks one thing; the first is the answer's opening), with the sentence it leans on (``in_context``).
    Every scored sentence of the passages competes, not only their quotes: a passage quotes the two sentences
    that answer any ask best, and for "How was S2ORC built, and how many papers have full text?" both were
    counts, so the first ask's best quote was "The LATEX subset of S2ORC also provides unique opportunities
    for research." (For a question that asks one thing the best sentence is always a quote.)"""
    best: dict[int, tuple[Quote, Evidence]] = {}
    for quote, item in sorted(((q, e) for e in evidence for q in e.sentences or e.quotes),
                              key=lambda pair: -pair[0].answer):
        best.setdefault(quote.ask, (quote, item))
    bare = [best[k] for k in sorted(best)]
    chosen: list[Quote] = []
    for index, (quote, item) in enumerate(bare):
        wider = in_context(quote, item)
        # Two asks answered by adjacent sentences: each is quoted as it is, not one inside the other (an earlier
        # ask's quote as shown, a later one's as it stands).
        others = [chosen[i] if i < index else q for i, (q, it) in enumerate(bare) if i != index and it is item]
        chosen.append(quote if any(q.start < wider.end and wider.start < q.end for q in others) else wider)
    return tuple(chosen)


def in_context(quote: Quote, item: Evidence, limit: int = CONTEXT_CHARS) -> Quote:
    """The quote with the sentence it leans on, when the two stay within ``limit`` characters: the sentence
    before, when the quote opens by pointing back to it ("These interactions are the drivers ..." says what
    they are only after "The convergence model ... interactions of ..."); else the sentence after, when that
    one continues it ("It is also highly specific ..."). Still one verbatim span of the passage, so its
    citation and highlight work as any quote's."""
    text = item.reference.text
    spans = sorted({(q.start, q.end) for q in item.sentences or item.quotes})
    before = [s for s in spans if s[1] <= quote.start and not text[s[1]:quote.start].strip()]
    after = [s for s in spans if s[0] >= quote.end and not text[quote.end:s[0]].strip()]
    start, end = quote.start, quote.end
    if _POINTS_BACK.match(quote.text) and before:
        start = before[-1][0]
    elif after and _POINTS_BACK.match(text, after[0][0]):
        end = after[0][1]
    if (start, end) == (quote.start, quote.end) or end - start > limit:
        return quote
    return replace(quote, start=start, end=end, text=text[start:end])
