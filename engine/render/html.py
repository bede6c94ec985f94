"""An answer as HTML: the one renderer behind the app's answer view and ``quire ask --html``.

The markup is what Qt's rich-text engine (QTextDocument) and a browser both show the same way:
inline styles, paragraphs, an ordered list of references. Only the citation links differ: the app
passes a ``link`` that makes ``quire://cite/<n>?s=<sentence>`` (the sentence index tells the viewer
which quote backs that claim), a saved file keeps the default, anchors to its own references list.

Every string that comes from a paper or the model goes through :func:`html.escape`, so a PDF
saying ``<script>`` or "ignore previous instructions" is shown as text, never interpreted.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping

from engine.cite.markers import find_markers
from engine.render.common import (
    CONTRADICTED,
    PARTIAL,
    SUPPORT_EXPLAINED,
    UNCHECKED,
    UNSUPPORTED,
    explained,
    is_quote,
    paper_line,
    paper_quotes,
    papers_of,
    support_level,
)
from engine.render.figures import figure_html, picture_keys
from engine.render.links import paper_links
from engine.types import Answer, AnswerMode, AnswerSentence, PaperReference

LinkFor = Callable[[int, int | None], str]  # (reference number, sentence index or None) -> href

UNSUPPORTED_STYLE = "background-color:#fde7e4; color:#8c2a1c; text-decoration:underline"
# Inline, so the levels look apart without a stylesheet: supported sentences are plain, partly supported
# ones get an amber wash, not confirmed ones (no passage read says them) amber and underlined,
# contradicted ones red and struck through (a passage says otherwise), not checked ones grey. Red is kept
# for what a source contradicts: a sentence the judge merely could not match is a warning, not an error.
NOT_CONFIRMED_STYLE = "background-color:#fff3cd; color:#6b4e00; text-decoration:underline"
LEVEL_STYLES = {PARTIAL: "background-color:#fff3cd; color:#6b4e00",
                UNSUPPORTED: NOT_CONFIRMED_STYLE,
                CONTRADICTED: UNSUPPORTED_STYLE + " line-through",
                UNCHECKED: "background-color:#ececec; color:#444; text-decoration:underline"}
LEVEL_WORDS = {PARTIAL: "partly supported", UNSUPPORTED: "not confirmed", CONTRADICTED: "contradicted by a source",
               UNCHECKED: "not checked"}
CITE_STYLE = "color:#1f5fbf; text-decoration:none; font-weight:600"
STOPPED = "Stopped before the answer was finished; what was written so far is kept."


def anchor_link(n: int, _sentence: int | None = None) -> str:
    """A link to reference ``n`` in the same document: what a saved HTML file can follow."""
    return f"#ref-{n}"


def linked(text: str, sentence: int | None, known: set[int], link: LinkFor = anchor_link) -> str:
    """Escape ``text`` and turn each [n] marker into links, one per number (``[1-3]`` links 1, 2 and 3);
    a number naming no reference stays plain text."""
    parts: list[str] = []
    position = 0
    for marker in find_markers(text):
        parts.append(html.escape(text[position:marker.start]))
        numbers = (f'<a class="cite" href="{html.escape(link(n, sentence))}" style="{CITE_STYLE}">{n}</a>'
                   if n in known else str(n) for n in marker.numbers)
        parts.append(f"[{', '.join(numbers)}]")
        position = marker.end
    parts.append(html.escape(text[position:]))
    return "".join(parts)


def _sentence(index: int, sentence: AnswerSentence, known: set[int], link: LinkFor, answer: Answer,
              figures: Mapping[str, bytes], shown: set[bytes]) -> str:
    body = linked(sentence.text, index, known, link)
    if figures:  # the figure a sentence cites or names, pictured right after it (once an answer)
        keys = []
        for key in picture_keys([c.passage_id for c in sentence.citations], sentence.text):
            if key in figures and figures[key] not in shown:
                shown.add(figures[key])
                keys.append(key)
        pages = {ref.passage_id: ref.page or 0 for ref in answer.references if ref.passage_id in keys}
        body += figure_html(keys, figures, pages)
    level = support_level(sentence)
    if level not in SUPPORT_EXPLAINED:
        return f'<span class="sentence">{body}</span>'
    return (f'<span class="sentence {level}" title="{html.escape(explained(sentence, answer))}" '
            f'style="{LEVEL_STYLES[level]}">{body}</span>')  # hover explains the mark


def open_links_html(answer: Answer, paper: PaperReference) -> str:
    """`` Open in Quire: p. 3, p. 6``: the ``quire://open`` link of each cited library passage of ``paper``."""
    opened = ", ".join(f'<a href="{html.escape(url)}" style="{CITE_STYLE}">p. {page}</a>'
                       for page, url in paper_links(answer, paper))
    return f' <span class="open-links">Open in Quire: {opened}.</span>' if opened else ""


def references_html(answer: Answer, papers: Iterable[PaperReference], link: LinkFor, quotes: bool,
                    open_links: bool = False) -> str:
    """One numbered item per cited paper: byline, title and pages (a link to its first cited passage),
    with ``open_links`` the link that opens each cited passage in the app, then, with ``quotes``, each
    quote the answer relies on with its page."""
    items = []
    for paper in papers:
        opened = open_links_html(answer, paper) if open_links else ""
        cited = "".join(f'<blockquote style="color:#555">“{html.escape(quote)}”{f" (p. {page})" if page else ""}'
                        "</blockquote>" for quote, page in paper_quotes(answer, paper.n)) if quotes else ""
        items.append(f'<li value="{paper.n}" id="ref-{paper.n}"><a name="ref-{paper.n}"></a>'
                     f'<a href="{html.escape(link(paper.n, None))}" style="{CITE_STYLE}">'
                     f"{html.escape(paper_line(paper))}</a>{opened}{cited}</li>")
    if not items:
        return ""
    return ('<p style="margin-top:14px;margin-bottom:4px;font-weight:600">References</p>'
            f'<ol class="references">{"".join(items)}</ol>')


def legend(answer: Answer) -> str:
    """A line naming each mark the answer shows, in its own colours."""
    shown = {support_level(sentence) for sentence in answer.sentences} & set(SUPPORT_EXPLAINED)
    if not shown:
        return ""
    marks = " · ".join(f'<span style="{LEVEL_STYLES[level]}">{LEVEL_WORDS[level]}</span>'
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
        items.append(f"<li><b>{html.escape(reference.bib.title or 'Untitled')}</b>{page}: "
                     f'<span style="color:#555">{html.escape(snippet)}</span></li>')
    return '<p style="font-weight:600;margin-top:10px">Closest passages</p><ul>' + "".join(items) + "</ul>"


def to_html(answer: Answer, link: LinkFor = anchor_link, quotes: bool = True, open_links: bool = True,
            figures: Mapping[str, bytes] | None = None) -> str:
    """The whole answer: notice, paragraphs grouped by section, legend and references (with the quotes
    each paper lends the answer when ``quotes``, and with ``open_links`` each cited passage's
    ``quire://open`` link; the app's own view shows both in its viewer instead). ``figures`` are PNG
    pictures of cited figures (``Engine.figure_images``), each shown once, after the first sentence that cites
    its caption or names it ("as Figure 2 shows")."""
    papers = papers_of(answer)
    known = {paper.n for paper in papers}
    blocks: list[str] = []
    pictured: set[bytes] = set()  # each figure is pictured once, after the first sentence that cites or names it
    if answer.cancelled:  # one message, whatever the engine's notice says about the stop
        blocks.append(f'<p class="notice" style="color:#8c2a1c"><i>{STOPPED}</i></p>')
    elif answer.notice:
        blocks.append(f'<p class="notice" style="color:#6b5d00;background-color:#fff8d6">&nbsp;'
                      f"{html.escape(answer.notice)}&nbsp;</p>")
    current_section = -1
    run: list[str] = []  # consecutive sentences of one kind: the model's, or verbatim quotes
    run_is_quotes = False
    gap = False  # a section with no heading is set apart from the one before by space instead

    def flush() -> None:
        # The model's sentences run on as a paragraph; verbatim quotes stand one to a line, as a list, so that a
        # theme of eight quotes does not read as one wall of text.
        nonlocal gap
        if not run:
            return
        if run_is_quotes:
            blocks.append(f'<ul style="margin-top:{"14px" if gap else "4px"};margin-bottom:4px">{"".join(run)}</ul>')
        else:
            style = ' style="margin-top:14px"' if gap else ""
            blocks.append(f"<p{style}>{' '.join(run)}</p>")
        run.clear()
        gap = False

    for index, sentence in enumerate(answer.sentences):
        if answer.sections and sentence.section != current_section:
            flush()
            current_section = sentence.section
            # A theme whose heading would not name its point has none.
            if 0 <= current_section < len(answer.sections) and answer.sections[current_section]:
                heading = html.escape(answer.sections[current_section])
                blocks.append(f'<p style="font-weight:600;margin-top:10px">{heading}</p>')
            else:
                gap = bool(blocks)
        rendered = _sentence(index, sentence, known, link, answer, figures or {}, pictured)
        quote = is_quote(sentence)
        if run and quote != run_is_quotes:
            flush()
        run_is_quotes = quote
        run.append(f'<li style="margin-bottom:4px">{rendered}</li>' if run_is_quotes else rendered)
    flush()
    if not answer.sentences and answer.text:
        blocks.append(f"<p>{linked(answer.text, None, known, link)}</p>")
    blocks.append(legend(answer))
    if answer.mode == AnswerMode.DIGEST and not answer.notice:
        blocks.append('<p style="color:#777;font-size:small">Evidence digest: verbatim quotes grouped by theme.</p>')
    blocks.append(references_html(answer, papers, link, quotes, open_links))
    if answer.mode == AnswerMode.NO_EVIDENCE:
        blocks.append(closest_html(answer))
    return '<div class="answer" style="line-height:150%">' + "".join(blocks) + "</div>"
