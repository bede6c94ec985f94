"""Number an answer's references by paper: ``[1]`` .. ``[k]`` in order of first use, no gaps.

Inside the pipeline every passage handed to the model has its own number (the model cites
passages, and verification checks each citation against one passage's text). Readers think in
papers, so once the sentences are verified the numbers are rewritten: the first paper cited is
``[1]``, the next new paper ``[2]``, and two passages of one paper share their paper's number.
Each citation keeps its ``passage_id``, quote, page and rectangles, so ``[n]`` in a sentence still
opens the exact passage that sentence cites.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from engine.bibliography import Bibliography
from engine.cite.markers import rewrite_markers
from engine.retrieve.dedupe import bibliography_keys
from engine.types import AnswerSentence, PaperReference, Reference


class _Papers:
    """The papers cited so far, each as the keys that identify it: two passages are one paper when they share
    a document, a DOI, an arXiv id or a normalised title (a datastore holding "GRAPH ATTENTION NETWORKS" and
    "Graph Attention Networks" as two records, or a paper both in the library and in a datastore)."""

    def __init__(self) -> None:
        self._keys: list[set[str]] = []

    def number(self, reference: Reference) -> int:
        keys = bibliography_keys(reference.source, reference.doc_id, reference.bib)
        for index, known in enumerate(self._keys):
            if known & keys:
                known |= keys
                return index + 1
        self._keys.append(keys)
        return len(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


@dataclass(frozen=True)
class Numbered:
    """Sentences, cited passages, all given passages and cited papers, numbered by paper."""

    sentences: tuple[AnswerSentence, ...]
    references: tuple[Reference, ...]
    contexts: tuple[Reference, ...]
    papers: tuple[PaperReference, ...]


def number_by_paper(sentences: Sequence[AnswerSentence], given: Sequence[Reference]) -> Numbered:
    """Renumber ``sentences`` (whose citations use the passages' own numbers in ``given``) by paper."""
    by_number = {r.n: r for r in given}
    paper_of = _Papers()
    cited_passages: dict[str, int] = {}  # passage id -> paper number, in order of first use
    for sentence in sentences:
        for citation in sentence.citations:
            reference = by_number.get(citation.n)
            if reference is None or reference.passage_id in cited_passages:
                continue
            cited_passages[reference.passage_id] = paper_of.number(reference)

    def mapping(n: int) -> int | None:
        reference = by_number.get(n)
        return cited_passages.get(reference.passage_id) if reference is not None else None

    renumbered = []
    for sentence in sentences:
        citations = tuple(replace(c, n=mapping(c.n) or 0) for c in sentence.citations if mapping(c.n))
        renumbered.append(replace(sentence, text=rewrite_markers(sentence.text, mapping), citations=citations))
    contexts = tuple(replace(r, n=cited_passages.get(r.passage_id, 0)) for r in given)
    references = tuple(sorted((r for r in contexts if r.n), key=lambda r: (r.n, _first_use(r, cited_passages))))
    papers = tuple(_paper(n, [r for r in references if r.n == n]) for n in range(1, len(paper_of) + 1))
    return Numbered(tuple(renumbered), references, contexts, papers)


def _first_use(reference: Reference, order: dict[str, int]) -> int:
    return list(order).index(reference.passage_id)


def _paper(n: int, passages: Sequence[Reference]) -> PaperReference:
    first = passages[0]
    pages = sorted({p for r in passages for p in (r.page, r.page_end) if p is not None})
    return PaperReference(n=n, doc_id=first.doc_id, source=first.source, bib=fullest(r.bib for r in passages),
                          pages=tuple(pages), passage_ids=tuple(r.passage_id for r in passages))


def fullest(bibs: Iterable[Bibliography]) -> Bibliography:
    """Of one paper's descriptions, the one a reference is best made from: most fields known (authors, year,
    identifiers, venue), a title not in capitals before one that is; the first among equals."""
    def known(bib: Bibliography) -> tuple[int, int]:
        letters = [ch for ch in bib.title if ch.isalpha()]
        capitals = bool(letters) and all(ch.isupper() for ch in letters)
        fields = sum(map(bool, (bib.authors, bib.year, bib.doi, bib.arxiv_id, bib.url, bib.venue)))
        return fields, int(bool(bib.title) and not capitals)
    ranked = list(bibs)
    return max(ranked, key=known) if ranked else Bibliography()
