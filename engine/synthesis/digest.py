"""The evidence digest: the best-answering quote first, then themes of verbatim quotes.

No LM writes a word of it, so it is faithful by construction: every sentence is a whole sentence
of the passage it cites, and the quote's rectangles come along for highlighting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.cite.markers import defuse_markers
from engine.cite.verify import RectsFor, no_rects, quote_citation
from engine.synthesis.evidence import Quote
from engine.synthesis.plan import Theme, heading
from engine.types import AnswerSentence, Reference

ANSWER_HEADING = "Answer"


def quote_sentence(quote: Quote, references: Mapping[int, Reference], section: int,
                   rects_for: RectsFor = no_rects) -> AnswerSentence:
    """``“quote” [n]``: a sentence citing exactly that quote."""
    citation = quote_citation(references[quote.n], quote.start, quote.end, 1.0, rects_for)
    shown = defuse_markers(" ".join(quote.text.split()))  # the paper's own [17] is not ours
    return AnswerSentence(text=f"“{shown}” [{quote.n}]", citations=(citation,), supported=True, section=section,
                          needs_citation=True)


def digest_sentences(direct: Quote | None, themes: Sequence[Theme], references: Mapping[int, Reference],
                     rects_for: RectsFor = no_rects) -> tuple[list[AnswerSentence], tuple[str, ...]]:
    """The direct answer (section 0, when there is one), then one section per theme; and the headings."""
    sentences = []
    headings: list[str] = []
    if direct is not None:
        sentences.append(quote_sentence(direct, references, 0, rects_for))
        headings.append(ANSWER_HEADING)
    for theme in themes:
        quotes = [q for q in theme.quotes if direct is None or (q.n, q.start) != (direct.n, direct.start)]
        if not quotes:
            continue
        section = len(headings)
        # The heading names the theme's best quote that is shown (the direct answer is not repeated here).
        headings.append(heading(max(quotes, key=lambda q: q.answer).text))
        for quote in sorted(quotes, key=lambda q: -q.answer):
            sentences.append(quote_sentence(quote, references, section, rects_for))
    return sentences, tuple(headings)
