"""The evidence digest: the best-answering quote first, then themes of verbatim quotes.

No LM writes a word of it, so it is faithful by construction: every sentence is a whole sentence
of the passage it cites, and the quote's rectangles come along for highlighting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from engine.cite.markers import defuse_markers
from engine.cite.verify import RectsFor, no_rects, quote_citation
from engine.synthesis.evidence import Quote
from engine.synthesis.plan import Theme, heading
from engine.text.artefacts import as_shown
from engine.types import AnswerSentence, Reference

REPEATED_SHARE = 0.8  # a heading with this share of its quote's words is the quote again

ANSWER_HEADING = "Answer"
# Section 0's heading when its lead says that no passage answers: its quote is the closest, not an answer.
NO_ANSWER_HEADING = "No answer found"
MORE_HEADING = "More from the sources"


def quote_sentence(quote: Quote, references: Mapping[int, Reference], section: int,
                   rects_for: RectsFor = no_rects) -> AnswerSentence:
    """``“quote” [n]``: a sentence citing exactly that quote."""
    citation = quote_citation(references[quote.n], quote.start, quote.end, 1.0, rects_for)
    if quote.cells:  # a row quoted whole for the cells a question names: those cells are what it cites
        citation = replace(citation, rects=tuple(
            rect for start, end in quote.cells for rect in rects_for(citation.passage_id, start, end)))
    # The paper's own [17] is not ours; a footnote digit glued to a word is not the paper's text either
    # (the citation keeps the verbatim quote, so the highlight still finds it).
    shown = defuse_markers(as_shown(quote.text))
    return AnswerSentence(text=f"“{shown}” [{quote.n}]", citations=(citation,), supported=True, section=section,
                          needs_citation=True)


def _said(text: str) -> str:
    """What a quote says, for telling repeats apart: its words, case and spacing aside."""
    return " ".join(as_shown(text).lower().split())


def _unseen(quotes: Sequence[Quote], shown: set[str]) -> list[Quote]:
    """The quotes whose words are not in ``shown`` yet (and not twice here); ``shown`` gains theirs."""
    kept = []
    for quote in quotes:
        said = _said(quote.text)
        if said not in shown:
            shown.add(said)
            kept.append(quote)
    return kept


def repeats(title: str, quote: str) -> bool:
    """Whether the heading ``title`` holds nearly all of ``quote``'s words (it would say the quote twice)."""
    words = as_shown(quote).split()
    return bool(title) and len(title.split()) >= REPEATED_SHARE * len(words)


def digest_sentences(direct: Sequence[Quote], themes: Sequence[Theme], references: Mapping[int, Reference],
                     rects_for: RectsFor = no_rects, lead: str = "") -> tuple[list[AnswerSentence], tuple[str, ...]]:
    """The direct answer (section 0, when there is one: a quote for each thing the question asks, in the
    order asked), then one section per theme; and the headings.
    ``lead``: a plain statement that no passage answers; it opens section 0, before the closest quote."""
    sentences = []
    headings: list[str] = []
    if lead or direct:
        headings.append(NO_ANSWER_HEADING if lead else ANSWER_HEADING)
    if lead:
        sentences.append(AnswerSentence(lead, section=0, needs_citation=False, supported=True))
    sentences.extend(quote_sentence(quote, references, 0, rects_for) for quote in direct)
    # A paper may print a sentence twice (a caption's text again in the body, a note repeated), and two of
    # its passages then offer the same quote: it is shown once.
    shown = {_said(q.text) for q in direct}
    for theme in themes:
        # A direct answer may hold the sentence before or after its own (evidence.in_context): not shown twice.
        quotes = [q for q in theme.quotes if not any(q.n == d.n and q.text in d.text for d in direct)]
        quotes = _unseen(quotes, shown)
        if not quotes:
            continue
        section = len(headings)
        # The heading names the theme's best quote that is shown (the direct answer is not repeated here); over a
        # section of that one quote, a heading that is the quote again ("The English language filter reduces
        # GRO-BID parsing errors" above the sentence itself) is left out.
        best = max(quotes, key=lambda q: q.answer)
        title = heading(best.text)
        headings.append("" if len(quotes) == 1 and repeats(title, best.text) else title)
        for quote in sorted(quotes, key=lambda q: -q.answer):
            sentences.append(quote_sentence(quote, references, section, rects_for))
    return sentences, tuple(headings)


def with_evidence(written: Sequence[AnswerSentence], headings: Sequence[str], direct: Quote | None,
                  themes: Sequence[Theme], references: Mapping[int, Reference],
                  rects_for: RectsFor = no_rects) -> tuple[list[AnswerSentence], tuple[str, ...]]:
    """A written answer with the evidence it rests on in view: the quote that best answers the
    question right after the first sentence of the model's direct answer (the source's words, not
    the model's), and after the sections the best quote of every passage the digest would show that the
    model cited nowhere. A small model often writes from one passage and leaves the one that states the
    answer unused; the reader sees it either way, verbatim and cited, so a written answer never shows
    less of the evidence than the digest of the same passages."""
    # The quote goes right after the model's first sentence: a second sentence (often a long restatement)
    # would push it out of what a reader takes in first.
    sentences = [s for s in written if s.section == 0]
    if direct is not None:
        sentences.insert(min(1, len(sentences)), quote_sentence(direct, references, 0, rects_for))
    sentences.extend(s for s in written if s.section != 0)
    headings = tuple(headings) or (ANSWER_HEADING,)
    cited = {c.passage_id for s in sentences for c in s.citations}
    unused = sorted((q for theme in themes for q in theme.quotes
                     if references[q.n].passage_id not in cited), key=lambda q: -q.answer)
    shown: dict[int, Quote] = {}  # one quote a passage, by its reference number
    for quote in unused:
        shown.setdefault(quote.n, quote)
    if shown:
        section = len(headings)
        headings = (*headings, MORE_HEADING)
        sentences.extend(quote_sentence(q, references, section, rects_for) for q in shown.values())
    return sentences, headings
