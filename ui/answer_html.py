"""An answer as HTML for the answer view: clickable [n] citations, marked unsupported sentences and
the references list. Every piece of text from papers or the model is escaped, never interpreted.

Citation links are ``quire://cite/<n>?s=<sentence>``: the sentence index tells the viewer which
quote supports that particular claim, since one reference can back different sentences.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from PySide6.QtCore import QUrl, QUrlQuery

from engine.cite.markers import find_markers
from engine.render.common import (
    CONTRADICTED,
    PARTIAL,
    SUPPORT_EXPLAINED,
    UNCHECKED,
    UNSUPPORTED,
    paper_line,
    papers_of,
    support_level,
)
from engine.types import Answer, AnswerMode, AnswerSentence, PaperReference
from ui.stream_markup import stream_html

CITE_SCHEME = "quire"
UNSUPPORTED_STYLE = "background-color:#fde7e4; color:#8c2a1c; text-decoration:underline"
# Supported sentences are plain; partly supported ones get an amber wash; unsupported ones are red;
# contradicted ones red and struck through (a source says otherwise); not checked ones grey.
LEVEL_STYLES = {PARTIAL: "background-color:#fff3cd; color:#6b4e00",
                UNSUPPORTED: UNSUPPORTED_STYLE,
                CONTRADICTED: UNSUPPORTED_STYLE + " line-through",
                UNCHECKED: "background-color:#ececec; color:#444; text-decoration:underline"}
_CITE_STYLE = "color:#1f5fbf; text-decoration:none; font-weight:600"


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


def _linked(text: str, sentence: int | None, known: set[int]) -> str:
    """Escape ``text`` and turn each [n] marker into links, one per number (``[1-3]`` links 1, 2 and 3)."""
    parts: list[str] = []
    position = 0
    for marker in find_markers(text):
        parts.append(html.escape(text[position:marker.start]))
        parts.append(f"[{', '.join(_number_link(n, sentence, known) for n in marker.numbers)}]")
        position = marker.end
    parts.append(html.escape(text[position:]))
    return "".join(parts)


def _number_link(n: int, sentence: int | None, known: set[int]) -> str:
    if n not in known:
        return str(n)
    return f'<a href="{cite_url(n, sentence)}" style="{_CITE_STYLE}">{n}</a>'


def _sentence_html(index: int, sentence: AnswerSentence, known: set[int]) -> str:
    body = _linked(sentence.text, index, known)
    level = support_level(sentence)
    if level in SUPPORT_EXPLAINED:  # hover explains the mark
        return f'<span style="{LEVEL_STYLES[level]}" title="{html.escape(SUPPORT_EXPLAINED[level])}">{body}</span>'
    return body


def reference_line(paper: PaperReference) -> str:
    """Plain text: "Cohan et al. 2020, SPECTER: … pp. 3, 6. doi:…" (a datastore paper names its datastore)."""
    return paper_line(paper)


def references_html(papers: Iterable[PaperReference]) -> str:
    """One row per cited paper: its number (a link to its first cited passage), byline, title and pages."""
    items = [f'<tr><td valign="top" style="padding-right:6px"><a href="{cite_url(paper.n)}" style="{_CITE_STYLE}">'
             f"[{paper.n}]</a></td><td>{html.escape(reference_line(paper))}</td></tr>" for paper in papers]
    if not items:
        return ""
    return ('<p style="margin-top:14px;margin-bottom:4px;font-weight:600">References</p>'
            f'<table cellspacing="0" cellpadding="2">{"".join(items)}</table>')


def _legend(answer: Answer) -> str:
    shown = {support_level(sentence) for sentence in answer.sentences} & set(SUPPORT_EXPLAINED)
    if not shown:
        return ""
    words = {PARTIAL: "partly supported", UNSUPPORTED: "not supported", CONTRADICTED: "contradicted by a source",
             UNCHECKED: "not checked"}
    marks = " · ".join(f'<span style="{LEVEL_STYLES[level]}">{words[level]}</span>'
                       for level in (PARTIAL, UNSUPPORTED, CONTRADICTED, UNCHECKED) if level in shown)
    return (f'<p style="color:#777;font-size:small">Marked sentences: {marks}. Hover over one to see why; '
            "check them before relying on them.</p>")


def closest_html(answer: Answer, limit: int = 5, chars: int = 240) -> str:
    """The passages closest to a question nothing answered: title, page and the passage's start."""
    if not answer.contexts:
        return ""
    items = []
    for reference in answer.contexts[:limit]:
        text = " ".join(reference.text.split())
        snippet = text if len(text) <= chars else text[:chars].rsplit(" ", 1)[0] + " …"
        page = f", p. {reference.page}" if reference.page else ""
        items.append(f"<li><b>{html.escape(reference.title or 'Untitled')}</b>{page}: "
                     f'<span style="color:#555">{html.escape(snippet)}</span></li>')
    return '<p style="font-weight:600;margin-top:10px">Closest passages</p><ul>' + "".join(items) + "</ul>"


def answer_html(answer: Answer) -> str:
    """The whole answer: notice, paragraphs (grouped by section), legend and references."""
    papers = papers_of(answer)
    known = {paper.n for paper in papers}
    blocks: list[str] = []
    if answer.cancelled:  # one message, whatever the engine's notice says about the stop
        blocks.append('<p style="color:#8c2a1c"><i>Stopped before the answer was finished; what was written so far '
                      'is kept.</i></p>')
    elif answer.notice:
        blocks.append(f'<p style="color:#6b5d00;background-color:#fff8d6">&nbsp;{html.escape(answer.notice)}&nbsp;</p>')
    current_section = -1
    paragraph: list[str] = []
    for index, sentence in enumerate(answer.sentences):
        if answer.sections and sentence.section != current_section:
            if paragraph:
                blocks.append(f"<p>{' '.join(paragraph)}</p>")
                paragraph = []
            current_section = sentence.section
            if 0 <= current_section < len(answer.sections) and answer.sections[current_section]:
                heading = html.escape(answer.sections[current_section])
                blocks.append(f'<p style="font-weight:600;margin-top:10px">{heading}</p>')
        paragraph.append(_sentence_html(index, sentence, known))
    if paragraph:
        blocks.append(f"<p>{' '.join(paragraph)}</p>")
    if not answer.sentences and answer.text:
        blocks.append(f"<p>{_linked(answer.text, None, known)}</p>")
    blocks.append(_legend(answer))
    if answer.mode == AnswerMode.DIGEST and not answer.notice:
        blocks.append('<p style="color:#777;font-size:small">Evidence digest: verbatim quotes grouped by theme.</p>')
    blocks.append(references_html(papers))
    if answer.mode == AnswerMode.NO_EVIDENCE:
        blocks.append(closest_html(answer))
    return '<div style="line-height:150%">' + "".join(blocks) + "</div>"


def streaming_html(text: str, stage: str = "", *, cursor: bool = True) -> str:
    """What the answer view shows while the answer is still being written: headings and emphasis
    rendered, unfinished citation markers held back, everything the model wrote escaped."""
    caption = f'<p style="color:#888"><i>{html.escape(stage[:1].upper() + stage[1:])}…</i></p>' if stage else ""
    return caption + stream_html(text, cursor=cursor)
