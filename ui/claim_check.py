"""Question › Check a Claim…: the passages that support a sentence and those that contradict it, each a
link that opens its quote highlighted on the page (or, for a datastore paper, in its text). When none
does either, the closest passages read are listed with their quotes, marked "not stated here"."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QUrl

from engine.bibliography import Bibliography
from engine.types import Citation, Reference

CHECK_SCHEME, CHECK_HOST = "quire", "check"
# As `quire check` shows them (engine.cite.claims.CLOSEST_SHOWN and NOT_STATED_HERE; the UI reaches the
# engine only through its client, so the two values are repeated here).
CLOSEST_SHOWN = 3
NOT_STATED_HERE = "not stated here"
_SUPPORT_WORDS = {"supported": "supports it", "partial": "partly supports it", "contradicted": "contradicts it",
                  "unsupported": NOT_STATED_HERE}


def check_url(index: int) -> str:
    return f"{CHECK_SCHEME}://{CHECK_HOST}/{index}"


def parse_check_url(url: QUrl) -> int | None:
    """The passage index of a ``quire://check/<i>`` link; None for any other link."""
    if url.scheme() != CHECK_SCHEME or url.host() != CHECK_HOST:
        return None
    index = url.path().strip("/")
    return int(index) if index.isdigit() else None


def as_reference(passage: Any) -> tuple[Reference, Citation]:
    """A checked passage as what the viewer opens: the passage and its deciding quote."""
    reference = Reference(n=0, passage_id=passage.passage_id, doc_id=passage.doc_id, source=passage.source,
                          bib=Bibliography(title=passage.title), text=passage.quote, page=passage.page)
    citation = Citation(n=0, passage_id=passage.passage_id, quote=passage.quote, quote_start=0,
                        quote_end=len(passage.quote), support=passage.score)
    return reference, citation


def check_html(claim: str, passages: Sequence[Any], notes: Sequence[str] = ()) -> str:
    """The claim, then supporting and contradicting passages (escaped), each linked to its quote."""
    def items(wanted: tuple[str, ...], only: set[int] | None = None) -> str:
        rows = []
        for index, passage in enumerate(passages):
            if passage.verdict not in wanted or (only is not None and index not in only):
                continue
            where = f", p. {passage.page}" if passage.page else ("" if passage.source == "library"
                                                                 else f", from {passage.source}")
            rows.append(f'<li><a href="{check_url(index)}">{html.escape(passage.title or "Untitled")}{where}</a> '
                        f'<span style="color:#666">({_SUPPORT_WORDS.get(passage.verdict, passage.verdict)})</span>'
                        f"<br>“{html.escape(passage.shown_quote)}”</li>")
        return f"<ul>{''.join(rows)}</ul>" if rows else '<p style="color:#777">None found.</p>'

    blocks = [f'<p style="font-weight:600;font-size:large">Checking: {html.escape(claim)}</p>']
    blocks += [f'<p style="color:#6b5d00">{html.escape(note)}</p>' for note in notes]
    blocks.append('<p style="font-weight:600">Supporting passages</p>' + items(("supported", "partial")))
    blocks.append('<p style="font-weight:600">Contradicting passages</p>' + items(("contradicted",)))
    closest = closest_read(passages)
    if closest:
        # Nothing for or against: the passages nearest the claim show what was read and that it is not there.
        blocks.append('<p style="font-weight:600">Closest passages read</p>'
                      + items(("unsupported",), only=set(closest)))
        blocks.append('<p style="color:#777;font-size:small">Click a passage to see its quote highlighted where '
                      "it appears. None of the passages found supports or contradicts the claim; the closest "
                      "ones are listed so you can see what they do say.</p>")
    else:
        blocks.append('<p style="color:#777;font-size:small">Click a passage to see its quote highlighted where it '
                      "appears. Passages that neither support nor contradict the claim are not listed.</p>")
    return "".join(blocks)


def closest_read(passages: Sequence[Any], count: int = CLOSEST_SHOWN) -> list[int]:
    """Indexes of the passages to show as read when none supports or contradicts the claim (else [])."""
    if any(p.verdict in ("supported", "partial", "contradicted") for p in passages):
        return []
    return [i for i, p in enumerate(passages) if p.verdict == "unsupported"][:count]
