"""A table's footnotes: the short notes set right under it ("aNo significant difference between ...").

Journals put what a table's marks mean, its abbreviations and its statistics under the table, in
the table's width: "a Values in parentheses are for the highest resolution shell.", "bData
represent protein abundance as spectral counts.", "*LATEX preserves line breaks ...". Read as
running text they were spliced into the paragraph that follows the table; tied to the table they
stay with it: they are kept beside its caption (a passage of caption kind) and with every row, so
an export prints them under the table.

A table's notes start under its last row (or under its caption, where that is set under it), no
more than ``FIRST_GAP`` of the table's line heights below it, inside the table's width, on a line
that opens with a first note's mark ("a", "1" or a symbol, set before or glued to the note's
first word) or with a word notes open with ("Abbreviations", "Values", "Data", ...). Every line
after that, as closely spaced as a paragraph's and inside the table's width, is a note too: a new
one where the next mark opens it, the one before carried on otherwise. Anything else ends them,
so prose under a table is not taken: its first line would have to be set as close as a table's
own rows and open like a note.
"""

from __future__ import annotations

import re

from engine.ingest.layout import Line, PageLayout
from engine.ingest.regions import CAPTION
from engine.ingest.words import join_lines
from engine.types import Rect

FIRST_GAP = 1.5  # the first note's top at most this many table line heights under the table's bottom
LINE_GAP = 0.6  # a note's next line at most this many of its line heights under the line before

# A mark glued to the note's first word ("aNo", "†The"), or set apart before a word ("a Values",
# "* p < 0.05", "1 The BookSum number ...").
_GLUED = re.compile(r"^(?:[a-h]|[*∗†‡§¶#]{1,3})(?=[A-Z(\[])")
_SET_APART = re.compile(r"^(?:[a-h]|[*∗†‡§¶#]{1,3}|\d{1,2})\s+(?=\S)")
_OPENING_WORD = re.compile(r"^(?:Notes?|Abbreviations?|Values|Data|Statistics|Results|Significance|Source|Key)\b")


def opens_note(text: str) -> bool:
    """Whether a line reads as the start of a table's first note: its mark a symbol, "a" or "1" (notes are
    lettered or numbered from there), or a word notes open with."""
    mark = _mark(text)
    return mark in ("a", "1") or (bool(mark) and not mark[0].isalnum()) or bool(_OPENING_WORD.match(text))


def table_notes(layout: PageLayout, region: Rect, taken: set[int], line_height: float,
                under: float | None = None) -> list[list[int]]:
    """The notes under the table at ``region``: per note, the indexes of its lines in ``layout``.

    ``taken`` are the lines already the table's; ``line_height`` is the table's typical line height;
    ``under`` is where the notes may start when that is not the table's bottom (a caption set under
    the table, whose notes come after it).
    """
    top = region.y1 if under is None else under
    below = sorted((index for index, line in enumerate(layout.lines)
                    if index not in taken and layout.kinds[index] != CAPTION
                    and line.rect.y0 >= top - 0.5 * line_height and _within(line, region)),
                   key=lambda index: (layout.lines[index].rect.y0, layout.lines[index].rect.x0))
    notes: list[list[int]] = []
    previous: Line | None = None
    last_mark = ""
    for index in below:
        line = layout.lines[index]
        if previous is None:
            if line.rect.y0 - top > FIRST_GAP * line_height or not opens_note(line.text):
                break
            notes.append([index])
            last_mark = _mark(line.text)
        else:
            height = previous.rect.y1 - previous.rect.y0
            if line.rect.y0 - previous.rect.y1 > LINE_GAP * height:
                break
            mark = _mark(line.text)
            if mark and _follows(mark, last_mark):
                notes.append([index])
                last_mark = mark
            else:
                notes[-1].append(index)
        previous = line
    return notes


def note_texts(layout: PageLayout, notes: list[list[int]]) -> tuple[str, ...]:
    """Each note's text, its lines joined (a word broken at a line's end joined back)."""
    return tuple(join_lines(layout.lines[index].text.strip() for index in lines) for lines in notes)


def _mark(text: str) -> str:
    """The note mark a line opens with ("a", "†", "12"), or ""."""
    match = _GLUED.match(text) or _SET_APART.match(text)
    return match.group(0).strip() if match else ""


def _follows(mark: str, last: str) -> bool:
    """Whether ``mark`` opens the next note after the one marked ``last``: a symbol always does, a letter
    or a number only after the one before it (or as the first: "a", "1"), so a line that carries a
    note on with "a" or "2" stays in it."""
    if not mark[0].isalnum():
        return True
    if mark.isdigit():
        return int(mark) == int(last) + 1 if last.isdigit() else mark == "1"
    return ord(mark) == ord(last) + 1 if len(last) == 1 and last.isalpha() else mark == "a"


def _within(line: Line, region: Rect) -> bool:
    """A line set in the table's width: its middle inside the table's left and right edges."""
    middle = (line.rect.x0 + line.rect.x1) / 2
    return region.x0 <= middle <= region.x1 and line.rect.x0 >= region.x0 - 0.05 * (region.x1 - region.x0)
