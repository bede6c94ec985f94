"""Small pictures of the figures an answer cites: the region of each cited figure caption, cut from its page.

The answer view and the HTML export show one beside the sentence that cites the figure, so a reader sees
what "Figure 3" shows without opening the paper. Pictures are PNG, at most ``MAX_WIDTH`` pixels wide:
small enough to embed in a saved HTML file as ``data:`` URLs.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable
from typing import Protocol

import pymupdf

from engine.errors import DocumentNotFoundError
from engine.types import LIBRARY_SOURCE, Answer, Document, PageRect, Passage

log = logging.getLogger(__name__)

MAX_WIDTH = 320  # pixels: a thumbnail beside a sentence, not a second viewer
_MAX_ZOOM = 2.0  # a small figure is not blown up past twice its printed size


class _Catalog(Protocol):
    def passage(self, passage_id: str) -> Passage: ...
    def document(self, doc_id: str) -> Document: ...


def region_png(path: str, region: PageRect, max_width: int = MAX_WIDTH) -> bytes:
    """The region of a page of the PDF at ``path`` as PNG bytes, scaled to at most ``max_width`` pixels wide."""
    with pymupdf.open(path) as document:
        page = document.load_page(region.page - 1)
        clip = pymupdf.Rect(*region.rect) & page.rect
        if clip.is_empty:
            raise ValueError(f"the region {tuple(region.rect)} is off page {region.page}")
        zoom = min(_MAX_ZOOM, (max_width - 1) / max(clip.width, 1.0))  # the pixmap rounds its width up
        return page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=clip, alpha=False).tobytes("png")


def cited_passage_ids(answer: Answer) -> list[str]:
    """The library passages the answer's sentences cite, in order of first citation."""
    library = {reference.passage_id for reference in (*answer.references, *answer.contexts)
               if reference.source == LIBRARY_SOURCE}
    seen: dict[str, None] = {}
    for sentence in answer.sentences:
        for citation in sentence.citations:
            if citation.passage_id in library:
                seen.setdefault(citation.passage_id)
    return list(seen)


def figure_images(answer: Answer, catalog: _Catalog, max_width: int = MAX_WIDTH) -> dict[str, bytes]:
    """PNG pictures of the figures the answer cites, by the id of the cited caption passage. A paper removed
    since, a file moved away or a page that will not render costs that picture only."""
    pictures: dict[str, bytes] = {}
    for passage_id in cited_passage_ids(answer):
        try:
            passage = catalog.passage(passage_id)
            if passage.figure is None:
                continue
            pictures[passage_id] = region_png(catalog.document(passage.doc_id).path, passage.figure, max_width)
        except DocumentNotFoundError:
            continue
        except Exception as exc:  # an unreadable or missing file: the answer is shown without the picture
            log.info("No picture of the figure of %s: %s", passage_id, exc)
    return pictures


def data_url(png: bytes) -> str:
    """A PNG as a ``data:`` URL, which a browser and Qt's rich text both show."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def figure_html(passage_ids: Iterable[str], pictures: dict[str, bytes], pages: dict[str, int]) -> str:
    """The pictures of the cited figures among ``passage_ids``, each on a line of its own."""
    return "".join(f'<br><img src="{data_url(pictures[pid])}" alt="The cited figure (p. {pages.get(pid, "?")})" '
                   f'title="The cited figure, p. {pages.get(pid, "?")}">'
                   for pid in dict.fromkeys(passage_ids) if pid in pictures)
