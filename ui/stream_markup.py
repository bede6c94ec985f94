"""The text a model is still writing, as HTML: Markdown headings and emphasis rendered, citation
markers whole.

The model writes Markdown ("## How is SPECTER trained?", "**triplet loss**") and markers such as
"([1])" that arrive token by token; shown raw, the reader sees "##" and fragments like "( [1".
Everything is escaped first, so nothing the model writes can become markup of its own.
"""

from __future__ import annotations

import html
import re

# A marker still being written at the very end: "[", "[1", "[1, 2", or an opening "(" before one.
_OPEN_MARKER = re.compile(r"\s*\(?\s*\[[\d,\s\-–]*$|\s*\(\s*$")
# A marker wrapped in brackets of the model's own ("( [1] )", "([1, 2])") reads as the bare marker.
_WRAPPED_MARKER = re.compile(r"\(\s*(\[\d+(?:\s*[,\-–]\s*\d+)*\])\s*\)")
_SPACED_MARKER = re.compile(r"\s+(\[\d+(?:\s*[,\-–]\s*\d+)*\])")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*(.*?)\s*#*\s*$")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])|(?<![\w_])_(?=\S)([^_]+?)(?<=\S)_(?![\w_])")
_BULLET = re.compile(r"^\s*[-*•]\s+")


def settled_text(text: str) -> str:
    """``text`` without a citation marker that is not finished yet, and with markers tidied."""
    text = _OPEN_MARKER.sub("", text)
    text = _WRAPPED_MARKER.sub(r" \1", text)
    return _SPACED_MARKER.sub(r" \1", text)


def _inline(line: str) -> str:
    escaped = html.escape(line)
    escaped = _STRONG.sub(lambda m: f"<b>{m.group(1) or m.group(2)}</b>", escaped)
    return _EMPHASIS.sub(lambda m: f"<i>{m.group(1) or m.group(2)}</i>", escaped)


def stream_html(text: str, *, cursor: bool = True) -> str:
    """Paragraphs and headings of the text written so far, ending in a cursor while it streams."""
    blocks: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            blocks.append('<p style="line-height:150%">' + "<br>".join(paragraph) + "</p>")
            paragraph.clear()

    for line in settled_text(text).split("\n"):
        heading = _HEADING.match(line) if line.lstrip().startswith("#") else None
        if heading is not None:
            flush()
            if heading.group(1):
                blocks.append(f'<p style="font-weight:600;margin-top:10px">{_inline(heading.group(1))}</p>')
        elif not line.strip():
            flush()
        else:
            paragraph.append(_inline(_BULLET.sub("• ", line)))
    flush()
    mark = "▍" if cursor else ""
    if blocks and blocks[-1].endswith("</p>") and mark:
        blocks[-1] = blocks[-1][: -len("</p>")] + mark + "</p>"
    elif mark:
        blocks.append(f"<p>{mark}</p>")
    return "".join(blocks)
