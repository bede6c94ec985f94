"""``quire://`` links: an address that opens a paper in the desktop app at a page, its quote lit.

``quire://open?paper=ID&page=N&passage=PID&quote=TEXT`` is what MCP results, the Markdown and HTML
exports and ``quire ask --json`` hand out; the desktop app (``quire-desktop URL``, or the system's
``x-scheme-handler/quire`` handler) parses it back here. ``passage`` and ``quote`` are optional: without
them the viewer opens at the page; with a passage it lights that passage, and with a quote the quote's
own words inside it. ``quire://paper/ID`` names a paper as an MCP resource.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

from engine.errors import EngineError

SCHEME = "quire"
# A quote longer than this is cut in the link (at a word end): the viewer finds it by its start, and a
# link of a whole passage would be unwieldy in a chat or a document.
QUOTE_CHARS = 300
# Document ids are SHA-256 hex digests; passage ids add "-NNNN" (engine.types.passage_id).
_DOC_ID = re.compile(r"[0-9a-f]{8,64}")
_PASSAGE_ID = re.compile(r"[0-9a-f]{8,64}-\d{1,6}")


class LinkError(EngineError):
    """A ``quire://`` address that is not one Quire makes; the message says what is wrong with it."""


@dataclass(frozen=True)
class OpenLink:
    """Where a ``quire://open`` link points: a paper, a page (1-based), optionally a passage and a quote."""

    paper: str
    page: int = 1
    passage: str = ""
    quote: str = ""


def open_link(paper: str, page: int | None, passage: str = "", quote: str = "") -> str:
    """The ``quire://open`` address of ``paper`` at ``page`` (1 when unknown), lighting ``passage``/``quote``."""
    query: dict[str, str] = {"paper": paper, "page": str(page or 1)}
    if passage:
        query["passage"] = passage
    shortened = _shortened(" ".join(quote.split()))
    if shortened:
        query["quote"] = shortened
    return f"{SCHEME}://open?{urlencode(query)}"


def paper_uri(paper: str) -> str:
    """The MCP resource address of a library paper."""
    return f"{SCHEME}://paper/{paper}"


def parse_open_link(url: str) -> OpenLink:
    """Read a ``quire://open`` address back; LinkError names the part that is wrong."""
    parts = urlsplit(url.strip())
    if parts.scheme != SCHEME:
        raise LinkError(f"{url!r} is not a quire:// link.")
    if parts.netloc != "open" or parts.path not in ("", "/"):
        raise LinkError(f"{url!r}: Quire opens links of the form quire://open?paper=ID&page=N.")
    query = parse_qs(parts.query, keep_blank_values=True)
    paper = _one(query, "paper", url)
    if not _DOC_ID.fullmatch(paper):
        raise LinkError(f"{url!r}: paper={paper!r} is not a paper id (the hexadecimal id `quire library list` "
                        "shows).")
    page_text = _one(query, "page", url, default="1")
    if not page_text.isdigit() or int(page_text) < 1:
        raise LinkError(f"{url!r}: page={page_text!r} is not a page number (1 or more).")
    passage = _one(query, "passage", url, default="")
    if passage and not (_PASSAGE_ID.fullmatch(passage) and passage.startswith(paper)):
        raise LinkError(f"{url!r}: passage={passage!r} is not a passage of paper {paper}.")
    return OpenLink(paper, int(page_text), passage, _one(query, "quote", url, default=""))


def quote_span(text: str, quote: str) -> tuple[int, int] | None:
    """Where a link's ``quote`` sits in a passage's ``text``, as (start, end), or None.

    A link carries the quote with its white space folded to single spaces and perhaps cut at a word end
    (:data:`QUOTE_CHARS`), so the words are matched in order across any white space, and the quote's
    start is enough to find it.
    """
    words = quote.split()
    if not words:
        return None
    match = re.search(r"\s+".join(re.escape(word) for word in words), text)
    return (match.start(), match.end()) if match else None


def _one(query: dict[str, list[str]], name: str, url: str, default: str | None = None) -> str:
    values = query.get(name)
    if not values:
        if default is None:
            raise LinkError(f"{url!r} does not name a {name}.")
        return default
    if len(values) > 1:
        raise LinkError(f"{url!r} names {name} more than once.")
    return values[0]


def _shortened(quote: str) -> str:
    if len(quote) <= QUOTE_CHARS:
        return quote
    cut = quote[:QUOTE_CHARS]
    return cut[:cut.rfind(" ")] if " " in cut else cut
