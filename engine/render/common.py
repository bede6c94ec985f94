"""Small helpers the renderers share: page spans, author bylines and one-line references."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from engine.bibliography import is_group_author
from engine.ingest.names import family_name
from engine.types import Answer, AnswerSentence, PaperReference, Reference

Work = Reference | PaperReference  # a cited paper, or one passage of it: its ``bib`` and ``source``
SUPPORTED, PARTIAL, UNSUPPORTED, CONTRADICTED = "supported", "partial", "unsupported", "contradicted"
UNCHECKED = "unchecked"
# What each verdict means, for tooltips and notes. "Contradicted" (a source says the opposite) and
# "not confirmed" (no source read says it) are different warnings and always look different.
SUPPORT_EXPLAINED = {
    PARTIAL: "Partly supported: the cited passages back only part of this sentence",
    UNSUPPORTED: "Not confirmed: no passage read says this; check it before relying on it",
    CONTRADICTED: "Contradicted: a source says the opposite of this sentence",
    UNCHECKED: "Not checked: the support judge was not loaded, or the answer was stopped before checking, so "
               "this is the model's own text, unverified",
}


# A verbatim quote as the digest writes it: “the source's words” [n].
_QUOTE = re.compile(r"^“.*”\s*\[\d+\]$", re.DOTALL)


def is_quote(sentence: AnswerSentence) -> bool:
    """Whether ``sentence`` is a source's words quoted verbatim (a digest's quote, or one shown beside a written
    answer), not a sentence the model wrote."""
    return bool(_QUOTE.match(sentence.text.strip()))


def pages(reference: Reference) -> str:
    """``p. 3``, ``pp. 3-4`` or ``""`` for a datastore record without pages."""
    if reference.page is None:
        return ""
    if reference.page_end is None or reference.page_end == reference.page:
        return f"p. {reference.page}"
    return f"pp. {reference.page}-{reference.page_end}"


def page_list(numbers: Iterable[int]) -> str:
    """``p. 3`` or ``pp. 3, 6-8`` for the pages a paper is cited on (runs joined with a hyphen)."""
    ordered = sorted(set(numbers))
    if not ordered:
        return ""
    runs: list[str] = []
    start = previous = ordered[0]
    for number in ordered[1:]:
        if number != previous + 1:
            runs.append(str(start) if start == previous else f"{start}-{previous}")
            start = number
        previous = number
    runs.append(str(start) if start == previous else f"{start}-{previous}")
    return ("p. " if len(ordered) == 1 else "pp. ") + ", ".join(runs)


def surname(author: str) -> str:
    """The family name of ``"Arman Cohan"``, ``"Cohan, Arman"`` or ``"Madeleine van Zuylen"`` (``van Zuylen``);
    an organisation's whole name."""
    return " ".join(author.split()) if is_group_author(author) else family_name(author)


def byline(authors: Sequence[str], year: int | None) -> str:
    """``Cohan et al. 2020``, ``Cohan and Feldman 2020``, ``Cohan 2020``, ``2020`` or ``""``."""
    names = [surname(a) for a in authors if surname(a)]
    if len(names) > 2:
        who = f"{names[0]} et al."
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = names[0] if names else ""
    return " ".join(part for part in (who, str(year) if year else "") if part)


def explained(sentence: AnswerSentence, answer: Answer, most: int = 8) -> str:
    """The hover of a marked sentence: the verdict's meaning, then for a contradicted sentence the passage
    that says otherwise and its quote, for a not-confirmed one the passages that were read."""
    level = support_level(sentence)
    meaning = SUPPORT_EXPLAINED.get(level, "")
    if level == CONTRADICTED and sentence.contradictions:
        first = sentence.contradictions[0]
        try:
            source = answer.passage(first.passage_id)
            where = ", ".join(part for part in (source.bib.title, pages(source)) if part)
        except KeyError:
            where = ""
        others = len(sentence.contradictions) - 1
        return (f"Contradicted: {where or 'a source'} says otherwise: “{' '.join(first.quote.split())}”"
                + (f" (and {others} more passage{'s' if others > 1 else ''})" if others > 0 else ""))
    if level == UNSUPPORTED and answer.contexts:
        # Verification judges every passage given to the model against a sentence none of its citations
        # supports (engine/cite/verify.py), so these are the passages read.
        by_paper: dict[str, list[int]] = {}  # one entry a paper, with the pages of its passages read
        for ref in answer.contexts:
            by_paper.setdefault(ref.bib.title or "Untitled", []).extend(
                range(ref.page, (ref.page_end or ref.page) + 1) if ref.page is not None else ())
        read = [f"{title}{' (' + page_list(numbers) + ')' if numbers else ''}"
                for title, numbers in list(by_paper.items())[:most]]
        more = len(by_paper) - len(read)
        return (f"{meaning}. Passages read ({len(answer.contexts)}): " + "; ".join(read)
                + (f"; and {more} more papers" if more > 0 else "") + ".")
    return meaning


def support_level(sentence: AnswerSentence) -> str:
    """The verifier's verdict on a sentence; records saved before verdicts existed fall back to ``supported``."""
    if not sentence.needs_citation:
        return SUPPORTED
    verdict = getattr(sentence, "support", "")
    if verdict in (PARTIAL, CONTRADICTED, UNCHECKED) or (verdict == UNSUPPORTED and not sentence.supported):
        return str(verdict)
    return SUPPORTED if sentence.supported else UNSUPPORTED


def papers_of(answer: Answer) -> tuple[PaperReference, ...]:
    """The answer's cited papers, ``[n]`` for ``n`` = 1..k; rebuilt from its passages when an older
    record has no paper list (passages of one paper share its ``n``, or its document id)."""
    if answer.papers:
        return answer.papers
    grouped: dict[object, list[Reference]] = {}
    for reference in answer.references:
        grouped.setdefault(reference.n if reference.n else (reference.source, reference.doc_id), []).append(reference)
    papers = []
    for cited in grouped.values():
        first = cited[0]
        pages_cited = sorted({p for r in cited if r.page for p in range(r.page, (r.page_end or r.page) + 1)})
        papers.append(PaperReference(n=first.n, doc_id=first.doc_id, source=first.source, bib=first.bib,
                                     pages=tuple(pages_cited), passage_ids=tuple(r.passage_id for r in cited)))
    return tuple(sorted(papers, key=lambda paper: paper.n))


def paper_quotes(answer: Answer, n: int, limit: int = 3) -> list[tuple[str, int | None]]:
    """Up to ``limit`` distinct quotes the answer relies on from paper ``n``, with the page each is on."""
    quotes: list[tuple[str, int | None]] = []
    for sentence in answer.sentences:
        for citation in sentence.citations:
            text = " ".join(citation.quote.split())
            if citation.n != n or not text or any(text == seen for seen, _ in quotes):
                continue
            page = citation.rects[0].page if citation.rects else None
            if page is None:
                try:
                    page = answer.passage(citation.passage_id).page
                except KeyError:
                    page = None
            quotes.append((text, page))
            if len(quotes) == limit:
                return quotes
    return quotes


def paper_line(paper: PaperReference) -> str:
    """``Cohan et al. 2020, SPECTER: … pp. 3, 6. doi:…`` — one cited paper, plain text."""
    return work_line(paper, page_list(paper.pages))


def join_sentences(parts: Iterable[str]) -> str:
    """Join with ". ", without doubling a full stop a part already ends with ("et al.")."""
    out = ""
    for part in (p.strip() for p in parts):
        if not part:
            continue
        if out:
            out += " " if out.endswith((".", "?", "!")) else ". "
        out += part
    return out


def reference_line(reference: Reference) -> str:
    """``Cohan et al. 2020, SPECTER: … p. 3. doi:...`` — one passage's paper and pages, plain text."""
    return work_line(reference, pages(reference))


def work_line(work: Work, where: str) -> str:
    """Byline, title, ``where`` (pages), the datastore it came from and its DOI/arXiv id/URL."""
    bib = work.bib
    title = " ".join(bib.title.split()) or "(untitled)"
    who = byline(bib.authors, bib.year)
    head = f"{who}, {title}" if who else title
    parts = [head, where]
    if work.source != "library":
        parts.append(f"[{work.source}]")
    parts.append(bib.locator)
    return join_sentences(parts)
