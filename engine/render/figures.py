"""Small pictures of the figures an answer cites: the region of each cited figure caption, cut from its page.

The answer view and the HTML export show one beside the sentence that cites the figure, so a reader sees
what "Figure 3" shows without opening the paper. A sentence that names a figure of the paper it cites ("As
Figure 2 shows, ...") gets that figure's picture too: the digest quotes running text, never captions, so this is
how a digest's answer shows a figure. Pictures are PNG, at most ``MAX_WIDTH`` pixels wide: small enough to embed
in a saved HTML file as ``data:`` URLs.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Protocol

import pymupdf

from engine.errors import DocumentNotFoundError
from engine.types import LIBRARY_SOURCE, Answer, Document, PageRect, Passage

log = logging.getLogger(__name__)

MAX_WIDTH = 320  # pixels: a thumbnail beside a sentence, not a second viewer
_MAX_ZOOM = 2.0  # a small figure is not blown up past twice its printed size


# "Figure 2", "Fig. 3b", "Figs. 4": the figure a sentence names (the first of a list or range).
_NAMED_FIGURE = re.compile(r"\b(?:Fig(?:ure)?s?\.?)\s*(\d{1,3})(?![\d.]\d)", re.IGNORECASE)
_CAPTION_LABEL = re.compile(r"^\W*(?:Fig(?:ure)?s?\.?)\s*(\d{1,3})\b", re.IGNORECASE)


class _Catalog(Protocol):
    def passage(self, passage_id: str) -> Passage: ...
    def passages(self, doc_id: str) -> list[Passage]: ...
    def document(self, doc_id: str) -> Document: ...


def named_figures(text: str) -> list[str]:
    """The numbers of the figures ``text`` names, in order, each once ("as Figure 2 and Fig. 3 show" -> 2, 3)."""
    return list(dict.fromkeys(match.group(1) for match in _NAMED_FIGURE.finditer(text)))


def named_key(passage_id: str, number: str) -> str:
    """The key of the picture of figure ``number`` of the paper of ``passage_id``, named by a sentence citing it."""
    return f"{passage_id}#figure-{number}"


def picture_keys(passage_ids: Iterable[str], sentence_text: str) -> list[str]:
    """The pictures a sentence may show: each cited passage's own (a cited caption), then each figure the
    sentence names, of each cited passage's paper."""
    cited = list(dict.fromkeys(passage_ids))
    return cited + [named_key(pid, number) for pid in cited for number in named_figures(sentence_text)]


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
    """PNG pictures of the figures the answer cites, by the id of the cited caption passage, and of the figures
    its sentences name, by :func:`named_key`. A paper removed since, a file moved away or a page that will not
    render costs that picture only."""
    pictures: dict[str, bytes] = {}
    rendered: dict[str, bytes] = {}  # by caption passage id: a figure named by several sentences is drawn once
    cited = cited_passage_ids(answer)
    for passage_id in cited:
        _add_picture(pictures, passage_id, partial(catalog.passage, passage_id), catalog, max_width, rendered)
    doc_of = {r.passage_id: r.doc_id for r in (*answer.references, *answer.contexts) if r.passage_id in cited}
    captions: dict[str, dict[str, Passage]] = {}  # by paper, its captions by figure number
    for sentence in answer.sentences:
        numbers = named_figures(sentence.text)
        for citation in sentence.citations if numbers else ():
            if citation.passage_id not in doc_of or citation.passage_id in pictures:
                continue  # a datastore record has no page; a cited caption is pictured already
            for number in numbers:
                key = named_key(citation.passage_id, number)
                if key not in pictures:
                    find = partial(_caption, catalog, captions, doc_of[citation.passage_id], number)
                    _add_picture(pictures, key, find, catalog, max_width, rendered)
    return pictures


def _caption(catalog: _Catalog, captions: dict[str, dict[str, Passage]], doc_id: str,
             number: str) -> Passage | None:
    """The caption of figure ``number`` of paper ``doc_id`` that has a region, if there is one."""
    if doc_id not in captions:
        found: dict[str, Passage] = {}
        for passage in catalog.passages(doc_id):
            label = _CAPTION_LABEL.match(passage.text) if passage.figure is not None else None
            if label is not None:
                found.setdefault(label.group(1), passage)
        captions[doc_id] = found
    return captions[doc_id].get(number)


def _add_picture(pictures: dict[str, bytes], key: str, caption: Callable[[], Passage | None], catalog: _Catalog,
                 max_width: int, rendered: dict[str, bytes]) -> None:
    try:
        passage = caption()
        if passage is None or passage.figure is None:
            return
        if passage.id not in rendered:
            rendered[passage.id] = region_png(catalog.document(passage.doc_id).path, passage.figure, max_width)
        pictures[key] = rendered[passage.id]
    except DocumentNotFoundError:
        return
    except Exception as exc:  # an unreadable or missing file: the answer is shown without the picture
        log.info("No picture for %s: %s", key, exc)


def data_url(png: bytes) -> str:
    """A PNG as a ``data:`` URL, which a browser and Qt's rich text both show."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def figure_html(keys: Iterable[str], pictures: Mapping[str, bytes], pages: Mapping[str, int]) -> str:
    """The pictures among ``keys`` (:func:`picture_keys`), each on a line of its own."""
    shown = []
    for key in dict.fromkeys(keys):
        if key not in pictures:
            continue
        _, _, number = key.partition("#figure-")
        what = f"Figure {number}, which the sentence names" if number else f"The cited figure, p. {pages.get(key, '?')}"
        shown.append(f'<br><img src="{data_url(pictures[key])}" alt="{what}" title="{what}">')
    return "".join(shown)
