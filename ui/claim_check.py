"""Question › Check a Claim…: the passages that support a sentence and those that contradict it, each a
link that opens its quote highlighted on the page (or, for a datastore paper, in its text)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QUrl

from engine.bibliography import Bibliography
from engine.types import Citation, Reference

CHECK_SCHEME, CHECK_HOST = "quire", "check"
_SUPPORT_WORDS = {"supported": "supports it", "partial": "partly supports it", "contradicted": "contradicts it"}


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
    def items(wanted: tuple[str, ...]) -> str:
        rows = []
        for index, passage in enumerate(passages):
            if passage.verdict not in wanted:
                continue
            where = f", p. {passage.page}" if passage.page else ("" if passage.source == "library"
                                                                 else f", from {passage.source}")
            rows.append(f'<li><a href="{check_url(index)}">{html.escape(passage.title or "Untitled")}{where}</a> '
                        f'<span style="color:#666">({_SUPPORT_WORDS.get(passage.verdict, passage.verdict)})</span>'
                        f"<br>“{html.escape(passage.quote)}”</li>")
        return f"<ul>{''.join(rows)}</ul>" if rows else '<p style="color:#777">None found.</p>'

    blocks = [f'<p style="font-weight:600;font-size:large">Checking: {html.escape(claim)}</p>']
    blocks += [f'<p style="color:#6b5d00">{html.escape(note)}</p>' for note in notes]
    blocks.append('<p style="font-weight:600">Supporting passages</p>' + items(("supported", "partial")))
    blocks.append('<p style="font-weight:600">Contradicting passages</p>' + items(("contradicted",)))
    blocks.append('<p style="color:#777;font-size:small">Click a passage to see its quote highlighted where it '
                  "appears. Passages that neither support nor contradict the claim are not listed.</p>")
    return "".join(blocks)
