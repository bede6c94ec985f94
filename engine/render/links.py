"""The ``quire://open`` link of each cited passage of an answer: what the exports, ``quire ask --json``
and the MCP server hand out so a reader can open the cited page in the desktop app with the quote lit."""

from __future__ import annotations

from engine.links import open_link
from engine.types import LIBRARY_SOURCE, Answer, Citation, PaperReference, Reference


def link_page(reference: Reference, citation: Citation | None = None) -> int:
    """The page a passage's link opens: its quote's page when a citation names one, else the passage's."""
    return (citation.rects[0].page if citation and citation.rects else reference.page) or 1


def reference_link(reference: Reference, citation: Citation | None = None) -> str:
    """The link of a library passage (at its quote's page when a citation names one); "" for datastore passages,
    which have no PDF to open."""
    if reference.source != LIBRARY_SOURCE:
        return ""
    return open_link(reference.doc_id, link_page(reference, citation), reference.passage_id,
                     citation.quote if citation else "")


def citation_link(answer: Answer, citation: Citation) -> str:
    """The link of the passage a sentence's citation names, lighting its quote; "" when it has none."""
    try:
        reference = answer.passage(citation.passage_id)
    except KeyError:
        return ""
    return reference_link(reference, citation)


def _first_citations(answer: Answer) -> dict[str, Citation]:
    """Each cited passage's first citation, by passage id: the quote its link lights."""
    first: dict[str, Citation] = {}
    for sentence in answer.sentences:
        for citation in sentence.citations:
            first.setdefault(citation.passage_id, citation)
    return first


def answer_links(answer: Answer) -> dict[str, str]:
    """Each cited passage's link by passage id (its first citation's quote lit)."""
    links = {passage_id: citation_link(answer, citation) for passage_id, citation in _first_citations(answer).items()}
    return {passage_id: link for passage_id, link in links.items() if link}


def paper_links(answer: Answer, paper: PaperReference) -> list[tuple[int, str]]:
    """(page, link) of each cited library passage of ``paper``, in the order the answer first cites them:
    what the Markdown and HTML exports list under the paper (the links ``quire ask --json`` gives)."""
    first = _first_citations(answer)
    found: list[tuple[int, str]] = []
    for passage_id in paper.passage_ids:
        citation = first.get(passage_id)
        try:
            reference = answer.passage(passage_id)
        except KeyError:
            continue
        link = reference_link(reference, citation)
        if link and citation is not None:
            found.append((link_page(reference, citation), link))
    return found
