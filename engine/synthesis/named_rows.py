"""A table row the question names, brought to the passages an answer reads.

"In SPECTER, what is the All of SPECTER?" names a cell: the row's name and its column's header. The
digest then quotes that row first (evidence.names_the_cell), but only when search found it, and a
row is a poor search result: a run of header words and numbers, shorter than the prose about the
paper's topic that outranks it. The paper itself is found reliably, so the rows of the papers
search ranks highest are read for one the question names, and such a row joins the hits ahead of
the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.synthesis.evidence import names_the_cell
from engine.types import LIBRARY_SOURCE, Passage, SearchHit

# The question's paper is among search's first papers (the LitQA2 dev questions' paper ranked first for
# 40 of 41): reading more papers' rows would only find rows that share a word by chance.
PAPERS_READ = 2


def with_named_rows(question: str, hits: Sequence[SearchHit], rows_of: Callable[[str], Sequence[Passage]],
                    papers: int = PAPERS_READ) -> list[SearchHit]:
    """``hits`` with the table rows of its first ``papers`` library papers that ``question`` names put first.

    ``rows_of(doc_id)`` gives a paper's table-row passages. Rows already among the hits move to the front;
    the list keeps its length (the last hits make room)."""
    firsts: dict[str, SearchHit] = {}
    for hit in hits:
        if hit.source == LIBRARY_SOURCE and hit.doc_id not in firsts:
            firsts[hit.doc_id] = hit
            if len(firsts) == papers:
                break
    named: list[SearchHit] = []
    for doc_id, first in firsts.items():
        for row in rows_of(doc_id):
            if names_the_cell(question, row.text):
                named.append(SearchHit(passage_id=row.id, doc_id=doc_id, source=LIBRARY_SOURCE, bib=first.bib,
                                       text=row.text, score=first.score, page=row.page_start,
                                       page_end=row.page_end, is_reference=row.is_reference,
                                       ranks=(("named row", len(named) + 1),)))
    if not named:
        return list(hits)
    ids = {hit.passage_id for hit in named}
    return (named + [hit for hit in hits if hit.passage_id not in ids])[:max(len(hits), len(named))]
