"""An answer as Markdown: question, notice, sections, flagged sentences, then the references with quotes.

Everything that comes from a paper, a datastore record, the model or the user (passage text,
titles, authors, URLs, the question) is untrusted: it is escaped so that, rendered, it is text —
never a link, an image, HTML or Markdown structure. The only links written are ones Quire builds
itself: to ``http(s)`` URLs and DOIs, and the ``quire://open`` link of each cited passage (every part
of it percent-encoded by ``engine.links``), which opens its page in the desktop app.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from engine.cite.markers import MARKER, defuse_markers
from engine.render.common import (
    CONTRADICTED,
    PARTIAL,
    UNCHECKED,
    UNSUPPORTED,
    Work,
    byline,
    join_sentences,
    page_list,
    paper_quotes,
    papers_of,
    support_level,
)
from engine.render.links import paper_links
from engine.types import Answer, AnswerMode

# Markdown punctuation that can start a link, image, emphasis, code, table cell or HTML; escaped
# with a backslash wherever it appears (CommonMark allows escaping any ASCII punctuation).
_MD_SPECIAL = re.compile(r"([\\`*_\[\]{}|~#!])")
# Characters that would start a block (list, heading, quote, numbered list) at a line's start.
_LINE_START = re.compile(r"^(\s*)([-+>=]|\d+[.)])")
_SAFE_SCHEMES = ("http", "https")


def escape_markdown(text: str, *, strip: bool = True) -> str:
    """``text`` as inert Markdown: one line, HTML characters as entities, Markdown punctuation escaped.
    ``strip=False`` keeps a space at either end (a piece of a sentence between citation markers)."""
    flat = re.sub(r"\s+", " ", text)
    flat = flat.strip() if strip else flat
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    flat = _MD_SPECIAL.sub(r"\\\1", flat)
    return _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), flat)


def safe_url(url: str) -> str:
    """``url`` if it is an absolute http(s) URL that can be written as a Markdown link, else ``""``."""
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    if parts.scheme.lower() not in _SAFE_SCHEMES or not parts.netloc:
        return ""
    # Percent-encode what could end the link or open markup; the URL's meaning is unchanged.
    return quote(url, safe="/:?#&=%+,;@!$'*~.-_()")


def doi_url(doi: str) -> str:
    doi = doi.strip()
    return f"https://doi.org/{quote(doi, safe='/:;.-_()')}" if doi else ""


def _link(text: str, url: str) -> str:
    return f"[{escape_markdown(text)}](<{url}>)" if url else ""


def _sentence(text: str) -> str:
    """A model sentence, escaped, keeping its ``[n]`` citation markers readable."""
    parts: list[str] = []
    position = 0
    for match in MARKER.finditer(text):
        parts.append(escape_markdown(text[position:match.start()], strip=False))
        parts.append("\\[" + " ".join(match.group()[1:-1].split()) + "\\]")
        position = match.end()
    parts.append(escape_markdown(text[position:], strip=False))
    return "".join(parts).strip()


def work_markdown(work: Work, where: str) -> str:
    """``Cohan et al. 2020, *SPECTER…*. pp. 3, 6. [doi:10.…](https://doi.org/10.…)`` with every field escaped."""
    bib = work.bib
    who = byline(bib.authors, bib.year)
    title = f"*{escape_markdown(bib.title)}*" if bib.title.strip() else "(untitled)"
    parts = [f"{escape_markdown(who)}, {title}" if who else title, where]
    if work.source != "library":
        parts.append(escape_markdown(f"[{work.source}]"))
    # The DOI is percent-quoted for the link; arXiv and other addresses only checked for a safe scheme.
    parts.append(_link(bib.locator, doi_url(bib.doi) if bib.doi else safe_url(bib.link)))
    return join_sentences(parts)


_FLAGS = {PARTIAL: " *(partly supported)*", UNSUPPORTED: " *(not confirmed)*",
          CONTRADICTED: " *(contradicted: a source says the opposite)*", UNCHECKED: " *(not checked)*"}


def to_markdown(answer: Answer, quotes: bool = True) -> str:
    """The answer, each sentence flagged by its support level, then one reference per cited paper
    (its pages and, unless ``quotes`` is False, the quotes the answer relies on)."""
    lines: list[str] = [f"**Q:** {escape_markdown(answer.question)}", ""]
    if answer.notice:
        lines += [f"> {escape_markdown(answer.notice)}", ""]
    if answer.cancelled:
        lines += ["*(cancelled — partial answer)*", ""]
    digest = answer.mode == AnswerMode.DIGEST
    section = -1
    paragraph: list[str] = []
    for sentence in answer.sentences:
        if sentence.section != section:
            if paragraph:
                lines += ["\n".join(paragraph) if digest else " ".join(paragraph), ""]
                paragraph = []
            section = sentence.section
            if answer.sections and 0 <= section < len(answer.sections) and len(answer.sections) > 1 \
                    and answer.sections[section]:  # a theme with no heading that names its point has none
                lines += [f"### {escape_markdown(answer.sections[section])}", ""]
        text = _sentence(sentence.text) + _FLAGS.get(support_level(sentence), "")
        paragraph.append(f"- {text}" if digest else text)
    if paragraph:
        lines += ["\n".join(paragraph) if digest else " ".join(paragraph), ""]
    papers = papers_of(answer)
    if papers:
        lines += ["## References", ""]
        for paper in papers:
            opened = ", ".join(f"[p. {page}](<{link}>)" for page, link in paper_links(answer, paper))
            line = join_sentences([work_markdown(paper, page_list(paper.pages)),
                                   f"Open in Quire: {opened}." if opened else ""])
            lines.append(f"- \\[{paper.n}\\] {line}")
            if quotes and not digest:
                for quote, page in paper_quotes(answer, paper.n):
                    where = f" (p. {page})" if page else ""
                    lines.append(f"  > “{escape_markdown(defuse_markers(quote))}”{where}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
