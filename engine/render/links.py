"""The ``quire://open`` link of each cited passage of an answer: what the exports, ``quire ask --json``
and the MCP server hand out so a reader can open the cited page in the desktop app with the quote lit."""

from __future__ import annotations

from engine.links import open_link
from engine.types import LIBRARY_SOURCE, Answer, Citation, Reference


def reference_link(reference: Reference, citation: Citation | None = None) -> str:
    """The link of a library passage (at its quote's page when a citation names one); "" for datastore passages,
    which have no PDF to open."""
    if reference.source != LIBRARY_SOURCE:
        return ""
    page = citation.rects[0].page if citation and citation.rects else reference.page
    return open_link(reference.doc_id, page, reference.passage_id, citation.quote if citation else "")


def citation_link(answer: Answer, citation: Citation) -> str:
    """The link of the passage a sentence's citation names, lighting its quote; "" when it has none."""
    try:
        reference = answer.passage(citation.passage_id)
    except KeyError:
        return ""
    return reference_link(reference, citation)


def answer_links(answer: Answer) -> dict[str, str]:
    """Each cited passage's link by passage id (its first citation's quote lit)."""
    links: dict[str, str] = {}
    for sentence in answer.sentences:
        for citation in sentence.citations:
            if citation.passage_id not in links:
                link = citation_link(answer, citation)
                if link:
                    links[citation.passage_id] = link
    return links
