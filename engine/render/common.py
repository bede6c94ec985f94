"""Small helpers the renderers share."""

from __future__ import annotations

from engine.types import Reference


def pages(reference: Reference) -> str:
    """``p. 3``, ``pp. 3-4`` or ``""`` for a datastore record without pages."""
    if reference.page is None:
        return ""
    if reference.page_end is None or reference.page_end == reference.page:
        return f"p. {reference.page}"
    return f"pp. {reference.page}-{reference.page_end}"


def authors_short(reference: Reference) -> str:
    names = list(reference.authors)
    if not names:
        return ""
    return names[0] + (" et al." if len(names) > 2 else f" and {names[1]}" if len(names) == 2 else "")


def reference_line(reference: Reference) -> str:
    """``Title. Authors (Year). p. 3. doi:...`` — plain text, one line."""
    parts = [" ".join(reference.title.split()) or "(untitled)"]
    who = authors_short(reference)
    if who or reference.year:
        parts.append(f"{who}{' ' if who and reference.year else ''}{f'({reference.year})' if reference.year else ''}")
    where = pages(reference)
    if where:
        parts.append(where)
    if reference.source != "library":
        parts.append(f"[{reference.source}]")
    if reference.doi:
        parts.append(f"doi:{reference.doi}")
    elif reference.arxiv_id:
        parts.append(f"arXiv:{reference.arxiv_id}")
    elif reference.url:
        parts.append(reference.url)
    return ". ".join(p for p in parts if p)
