"""Plan: group the quotes into a few themes (sections of the answer) by embedding similarity.

Quotes start grouped by paper (a paper's quotes usually make one point about it); groups are then
merged, most similar first (average cosine of their quotes), while the similarity clears ``join``
or while there are more than ``max_themes``. Deterministic and LM-free. A theme's heading names its
topic: the noun phrase its best-answering quote is about (engine.synthesis.noun_phrase); otherwise the
theme has no heading (a sentence's opening words name nothing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.cite.markers import strip_markers
from engine.cite.support import SupportScorer
from engine.synthesis.evidence import Evidence, Quote
from engine.synthesis.noun_phrase import subject_phrase
from engine.text.artefacts import as_shown


@dataclass(frozen=True)
class Theme:
    title: str
    quotes: tuple[Quote, ...]

    @property
    def numbers(self) -> list[int]:
        return list(dict.fromkeys(q.n for q in self.quotes))


def select_quotes(evidence: Sequence[Evidence], max_quotes: int) -> list[Quote]:
    """Every relevant passage's best quote first, then second-best ones: the plan covers the papers
    retrieval found instead of filling up with one paper's many good sentences."""
    ranked = sorted(evidence, key=lambda e: -max((q.answer for q in e.quotes), default=0.0))
    rounds = max((len(e.quotes) for e in ranked), default=0)
    return [e.quotes_by_score[r] for r in range(rounds) for e in ranked if r < len(e.quotes)][:max_quotes]


def plan_themes(question: str, evidence: Sequence[Evidence], scorer: SupportScorer, max_themes: int = 3,
                join: float = 0.55, max_quotes: int = 12) -> list[Theme]:
    """Themes over the selected quotes, ordered by their best quote."""
    quotes = select_quotes(evidence, max_quotes)
    if not quotes:
        return []
    # Quotes start grouped by passage: a passage makes one point, and a one-paper answer still gets
    # its themes instead of one section holding every quote of the paper.
    doc_of = {e.reference.n: e.reference.passage_id for e in evidence}
    vectors = scorer.vectors([q.text for q in quotes])
    groups: list[list[int]] = []
    by_doc: dict[str, int] = {}
    for index, quote in enumerate(quotes):
        doc = doc_of.get(quote.n, str(quote.n))
        if doc not in by_doc:
            by_doc[doc] = len(groups)
            groups.append([])
        groups[by_doc[doc]].append(index)
    similarity = vectors @ vectors.T
    while len(groups) > 1:
        best, pair = -2.0, (0, 1)
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                link = float(np.mean(similarity[np.ix_(groups[a], groups[b])]))
                if link > best:
                    best, pair = link, (a, b)
        if best < join and len(groups) <= max_themes:
            break
        a, b = pair
        groups[a] = sorted(groups[a] + groups[b])
        del groups[b]
    groups.sort(key=lambda g: min(g))  # quotes are in selection order: best first
    themes = []
    for group in groups:
        members = [quotes[i] for i in group]
        lead = max(members, key=lambda q: q.answer)
        themes.append(Theme(heading(lead.text), tuple(members)))
    return themes


def short_title(title: str) -> str:
    """"SPECTER: Document-level ..." -> "SPECTER"; long titles are cut at a word boundary."""
    head = " ".join(title.split(":", 1)[0].split())
    if len(head) <= 60:
        return head
    return head[:60].rsplit(" ", 1)[0] + "…"


_LEAD = re.compile(r"^((in (addition|contrast|particular|summary|this (study|work|paper))|however|moreover|furthermore|"
                   r"thus|therefore|here|together|overall|notably|importantly|interestingly|similarly|finally|"
                   r"consistent with (this|these|previous) \w+|as (expected|a result|shown))\s*,?\s*)?"
                   r"((we|these results|our (results|data|findings)) (also )?(found|find|show|showed|shown|observed|"
                   r"observe|demonstrate|demonstrated|report|reveal|revealed|suggest|confirm|confirmed) that\s+)?",
                   re.IGNORECASE)
_PARENS = re.compile(r"\s*[(\[][^()\[\]]*[)\]]")
# A colon ends a clause, not the one in a web address ("http://").
_CLAUSE = re.compile(r";|:(?!//)|,\s+(which|while|whereas|and thus|but|although|suggesting|indicating)\b| – | — ")
_WEB_ADDRESS = re.compile(r"https?:|www\.|\.(?:com|org|edu|net)\b", re.IGNORECASE)


# A clause opening with one of these depends on the rest of the sentence ("Since our algorithm is
# trained on …"): cut short, it states nothing.
_DEPENDENT = re.compile(r"^(since|because|although|though|while|whereas|if|when|as|unlike|after|before|given|"
                        r"despite|to|for|in order|by|with|without|using|based on)\b", re.IGNORECASE)


def heading(quote: str) -> str:
    """A section heading from its best quote: the noun phrase its opening clause is about, lead-ins and
    parentheses dropped ("In addition, we find that SPECTER outperforms ..." -> "SPECTER"); ``""`` (no
    heading) when that clause opens with a pronoun or a phrase pointing back, or depends on the rest of
    the sentence: a sentence's opening words ("This has several desirable implications") name no theme."""
    text = as_shown(strip_markers(quote))  # a footnote's number glued to a word is no part of the point
    text = _PARENS.sub("", _LEAD.sub("", text)).strip()
    clause = _CLAUSE.split(text, maxsplit=1)[0].strip().rstrip(" ,.;:")
    if not clause or _DEPENDENT.match(clause) or _WEB_ADDRESS.search(clause):
        return ""
    return capitalised(subject_phrase(clause))


def capitalised(text: str) -> str:
    """First letter upper-cased unless the first word is a name such as "katE" or "p53" (mixed case, digits)."""
    first = text.split(" ", 1)[0]
    return text[:1].upper() + text[1:] if first.isalpha() and first.islower() else text
