"""The evidence digest: the plan rendered as themes of verbatim quotes with their references.

No LM writes a word of it, so it is faithful by construction: every sentence is a quote of the
passage it cites, and the quote's rectangles come along for highlighting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.cite.markers import defuse_markers
from engine.cite.verify import RectsFor, no_rects, quote_citation
from engine.synthesis.plan import Theme
from engine.types import AnswerSentence, Reference


def digest_sentences(themes: Sequence[Theme], references: Mapping[int, Reference],
                     rects_for: RectsFor = no_rects) -> list[AnswerSentence]:
    """One sentence per quote, section by section: ``“quote” [n]`` citing exactly that quote."""
    sentences = []
    for section, theme in enumerate(themes):
        for quote in sorted(theme.quotes, key=lambda q: (q.n, q.start)):
            reference = references[quote.n]
            citation = quote_citation(reference, quote.start, quote.end, 1.0, rects_for)
            shown = defuse_markers(" ".join(quote.text.split()))  # the paper's own [17] is not ours
            sentences.append(AnswerSentence(text=f"“{shown}” [{quote.n}]", citations=(citation,), supported=True,
                                            section=section, needs_citation=True))
    return sentences
