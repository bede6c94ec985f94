"""Claims per paper, side by side: one row per paper with its answer in one verified sentence.

The rows are the relevant papers, best answer first. Without a writer a row's sentence is the
paper's best-answering quote (verbatim). With a writer one call writes a line per paper,
``[k] sentence [k]``; each line is verified against that paper's passages only, and a line that
does not hold up (or is missing) is replaced by the paper's quote, so every row is supported.
The result is an ordinary answer: section ``i`` is row ``i`` and its heading the paper's title.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from engine.cite.markers import strip_markers
from engine.cite.support import SupportScorer
from engine.cite.verify import RectsFor, Verifier, no_rects, verify_sentence
from engine.generate.base import ChatMessage, LanguageModel, TokenCallback
from engine.progress import CancelToken
from engine.synthesis import prompts
from engine.synthesis.digest import quote_sentence
from engine.synthesis.evidence import Evidence, Quote
from engine.synthesis.numbering import paper_key
from engine.synthesis.plan import short_title
from engine.types import AnswerSentence, Reference, StepCost

MAX_ROWS = 10
_LINE = re.compile(r"^\s*\[(\d+)\]\s*(.+)$")


@dataclass(frozen=True)
class PaperEvidence:
    """One paper's relevant passages and its best-answering quote."""

    title: str
    evidence: tuple[Evidence, ...]
    best: Quote


def by_paper(evidence: Sequence[Evidence], max_rows: int = MAX_ROWS) -> list[PaperEvidence]:
    """Relevant passages grouped by paper, papers ordered by their best answer."""
    groups: dict[tuple[str, str], list[Evidence]] = {}
    for item in evidence:
        if item.quotes:
            groups.setdefault(paper_key(item.reference), []).append(item)
    papers = []
    for items in groups.values():
        best = max((q for e in items for q in e.quotes), key=lambda q: q.answer)
        papers.append(PaperEvidence(items[0].reference.bib.title, tuple(items), best))
    papers.sort(key=lambda p: -p.best.answer)
    return papers[:max_rows]


def table_rows(question: str, papers: Sequence[PaperEvidence], references: Mapping[int, Reference],
               scorer: SupportScorer, lm: LanguageModel | None = None, rects_for: RectsFor = no_rects,
               on_token: TokenCallback | None = None,
               cancel: CancelToken | None = None) -> tuple[list[AnswerSentence], tuple[str, ...], list[StepCost]]:
    """A verified sentence per paper (section = row), the row headings, and the LM call's cost."""
    written: dict[int, str] = {}
    steps: list[StepCost] = []
    if lm is not None and papers:
        written, step = _write_rows(question, papers, lm, on_token, cancel)
        steps.append(step)
    sentences = []
    for row, paper in enumerate(papers):
        sentence = _verified_row(written.get(row + 1, ""), paper, references, scorer, rects_for, row)
        sentences.append(sentence or quote_sentence(paper.best, references, row, rects_for))
    return sentences, tuple(short_title(p.title) or "(untitled)" for p in papers), steps


def _write_rows(question: str, papers: Sequence[PaperEvidence], lm: LanguageModel, on_token: TokenCallback | None,
                cancel: CancelToken | None) -> tuple[dict[int, str], StepCost]:
    """One call: a line per paper. Papers are numbered by row in this prompt (``[k]`` = row k)."""
    quotes: list[Quote] = []
    titles: dict[int, str] = {}
    for row, paper in enumerate(papers, start=1):
        titles[row] = paper.title
        best_two = sorted((q for e in paper.evidence for q in e.quotes), key=lambda q: -q.answer)[:2]
        quotes.extend(replace(q, n=row) for q in best_two)
    user = prompts.prefix(question, quotes, titles) + prompts.table_task(list(titles))
    messages = [ChatMessage("system", prompts.prompt("answer_system")), ChatMessage("user", user)]
    completion = lm.chat(messages, max_tokens=40 * len(papers) + 20, temperature=0.0, on_token=on_token,
                         cancel=cancel)
    rows: dict[int, str] = {}
    for line in completion.text.splitlines():
        match = _LINE.match(line)
        if match and int(match.group(1)) in titles and int(match.group(1)) not in rows:
            rows[int(match.group(1))] = strip_markers(match.group(2)).strip()
    return rows, StepCost("table", completion.prompt_tokens, completion.prompt_tokens_evaluated,
                          completion.completion_tokens, round(completion.seconds_to_first_token, 3),
                          round(completion.seconds_total, 3))


def _verified_row(text: str, paper: PaperEvidence, references: Mapping[int, Reference], scorer: SupportScorer,
                  rects_for: RectsFor, row: int) -> AnswerSentence | None:
    """The written sentence checked against this paper's passages only; None when it does not hold up."""
    if not text:
        return None
    own = {e.reference.n: references[e.reference.n] for e in paper.evidence}
    marked = f"{text.rstrip('. ')} [{', '.join(str(n) for n in own)}]."
    sentence = verify_sentence(marked, own, Verifier(scorer, rects_for), section=row)
    if not (sentence.supported and sentence.citations):
        return None
    best = max(sentence.citations, key=lambda c: c.support)  # one quote per row
    return replace(sentence, text=f"{strip_markers(sentence.text).rstrip('.')} [{best.n}].", citations=(best,))
