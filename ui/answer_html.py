"""The answer view's HTML: the engine's one answer renderer (engine/render/html.py) with citation links
the view can follow, and what the view shows while an answer is still being written.

Citation links are ``quire://cite/<n>?s=<sentence>``: the sentence index tells the viewer which
quote supports that particular claim, since one reference can back different sentences.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

from PySide6.QtCore import QUrl, QUrlQuery

from engine.render.common import paper_line
from engine.render.html import to_html
from engine.types import Answer, PaperReference
from ui.stream_markup import stream_html

CITE_SCHEME = "quire"


def cite_url(n: int, sentence: int | None = None) -> str:
    query = f"?s={sentence}" if sentence is not None else ""
    return f"{CITE_SCHEME}://cite/{n}{query}"


def parse_cite_url(url: QUrl) -> tuple[int, int | None] | None:
    """(reference number, sentence index or None) from a citation link; None for any other link."""
    if url.scheme() != CITE_SCHEME or url.host() != "cite":
        return None
    try:
        n = int(url.path().strip("/"))
    except ValueError:
        return None
    sentence = QUrlQuery(url).queryItemValue("s")
    return n, int(sentence) if sentence.isdigit() else None


def reference_line(paper: PaperReference) -> str:
    """Plain text: "Cohan et al. 2020, SPECTER: … pp. 3, 6. doi:…" (a datastore paper names its datastore)."""
    return paper_line(paper)


def answer_html(answer: Answer, figures: Mapping[str, bytes] | None = None) -> str:
    """The whole answer as the view shows it; the quotes are in the viewer, so the references list none.
    ``figures``: pictures of the cited figures (``Engine.figure_images``), shown after the citing sentences."""
    return to_html(answer, link=cite_url, quotes=False, open_links=False, figures=figures)


def streaming_html(text: str, stage: str = "", *, cursor: bool = True) -> str:
    """What the answer view shows while the answer is still being written: headings and emphasis
    rendered, unfinished citation markers held back, everything the model wrote escaped."""
    caption = f'<p style="color:#888"><i>{html.escape(stage[:1].upper() + stage[1:])}…</i></p>' if stage else ""
    return caption + stream_html(text, cursor=cursor)
