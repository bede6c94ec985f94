"""Small helpers the renderers share: page spans, author bylines and one-line references."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.types import Reference


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
    """The family name of ``"Arman Cohan"`` or ``"Cohan, Arman"``."""
    author = " ".join(author.split())
    if "," in author:
        return author.split(",", 1)[0].strip()
    parts = author.split()
    return parts[-1] if parts else ""


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


def authors_short(reference: Reference) -> str:
    names = list(reference.authors)
    if not names:
        return ""
    return names[0] + (" et al." if len(names) > 2 else f" and {names[1]}" if len(names) == 2 else "")


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


def locator(reference: Reference) -> str:
    """``doi:…``, else ``arXiv:…``, else the URL (plain text)."""
    if reference.doi:
        return f"doi:{reference.doi}"
    if reference.arxiv_id:
        return f"arXiv:{reference.arxiv_id}"
    return reference.url


def reference_line(reference: Reference, where: str | None = None) -> str:
    """``Cohan et al. 2020, SPECTER: … p. 3. doi:...`` — plain text, one line.

    ``where`` replaces the reference's own page span (a paper cited on several pages).
    """
    title = " ".join(reference.title.split()) or "(untitled)"
    who = byline(reference.authors, reference.year)
    head = f"{who}, {title}" if who else title
    parts = [head, pages(reference) if where is None else where]
    if reference.source != "library":
        parts.append(f"[{reference.source}]")
    parts.append(locator(reference))
    return join_sentences(parts)
