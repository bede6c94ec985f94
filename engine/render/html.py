"""An answer as HTML for the UI: ``quire://cite/<n>?s=<sentence>`` links, everything escaped.

Every string that comes from a paper or the model goes through :func:`html.escape`, so a PDF
saying ``<script>`` or "ignore previous instructions" is shown as text, never interpreted.
"""

from __future__ import annotations

import html

from engine.cite.markers import find_markers
from engine.render.common import SUPPORT_EXPLAINED, SUPPORTED, paper_line, paper_quotes, papers_of, support_level
from engine.types import Answer, AnswerMode

# Inline, so an exported file shows the levels apart without a stylesheet: partly supported amber,
# not supported red, contradicted red and struck through, not checked grey.
LEVEL_STYLES = {"partial": "background-color:#fff3cd", "unsupported": "background-color:#fde7e4",
                "contradicted": "background-color:#fde7e4; text-decoration:line-through",
                "unchecked": "background-color:#ececec; text-decoration:underline dotted"}


def cite_url(n: int, sentence: int | None = None) -> str:
    return f"quire://cite/{n}" + (f"?s={sentence}" if sentence is not None else "")


def _sentence_html(text: str, index: int, known: set[int]) -> str:
    parts: list[str] = []
    position = 0
    for marker in find_markers(text):
        parts.append(html.escape(text[position:marker.start]))
        links = [f'<a class="cite" href="{cite_url(n, index)}">{n}</a>' if n in known else str(n)
                 for n in marker.numbers]
        parts.append(f"[{', '.join(links)}]")
        position = marker.end
    parts.append(html.escape(text[position:]))
    return "".join(parts)


def to_html(answer: Answer) -> str:
    papers = papers_of(answer)
    known = {paper.n for paper in papers}
    out = ['<div class="answer">']
    if answer.notice:
        out.append(f'<p class="notice">{html.escape(answer.notice)}</p>')
    if answer.cancelled:
        out.append('<p class="notice cancelled">Cancelled — partial answer.</p>')
    section = -1
    open_block = ""
    for index, sentence in enumerate(answer.sentences):
        if sentence.section != section:
            if open_block:
                out.append(open_block)
            section = sentence.section
            if answer.sections and 0 <= section < len(answer.sections) and len(answer.sections) > 1 \
                    and answer.sections[section]:  # a theme with no heading that names its point has none
                out.append(f"<h3>{html.escape(answer.sections[section])}</h3>")
            digest = answer.mode == AnswerMode.DIGEST
            out.append("<ul>" if digest else "<p>")
            open_block = "</ul>" if digest else "</p>"
        level = support_level(sentence)
        classes = "sentence" + ("" if level == SUPPORTED else f" {level}")
        title = (f' title="{html.escape(SUPPORT_EXPLAINED[level])}" style="{LEVEL_STYLES[level]}"'
                 if level in SUPPORT_EXPLAINED else "")
        body = f'<span class="{classes}"{title}>{_sentence_html(sentence.text, index, known)}</span>'
        out.append(f"<li>{body}</li>" if answer.mode == AnswerMode.DIGEST else body + " ")
    if open_block:
        out.append(open_block)
    if papers:
        out.append('<h3>References</h3><ol class="references">')
        for paper in papers:
            quotes = "".join(f'<blockquote class="quote">“{html.escape(quote)}”{f" (p. {page})" if page else ""}'
                             "</blockquote>" for quote, page in paper_quotes(answer, paper.n))
            out.append(f'<li value="{paper.n}" id="ref-{paper.n}"><a href="{cite_url(paper.n)}">'
                       f"{html.escape(paper_line(paper))}</a>{quotes}</li>")
        out.append("</ol>")
    out.append("</div>")
    return "\n".join(out)
