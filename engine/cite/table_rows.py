"""Judging a claim against a table row as the row's "header: value" pairs, not as one run of words.

A row's text puts every value after its column's header ("Table 3, row SPECTER: CLS 84.2, USR 88.4"), and
the support model reads it as a bag of numbers: "The USR of SPECTER is 84.2." was judged supported by the
row above (84.2 is its CLS), as often as the true claim (benchmarks/table_judge.py). So a row is judged
cell by cell, each cell read with the row's name in front ("Table 3, row SPECTER: USR 88.4"), and a claim
that names a column but gives the number another column holds is refused by a check, whoever reads.
"""

from __future__ import annotations

import re

from engine.cite.checks import CheckResult, numbers
from engine.text.stopwords import STOP_WORDS
from engine.text.table_rows import RowText, read_row

_EDGE = ".,:;|()[]{}\"'"
_NUMBER = re.compile(r"^[-+−]?[\d.,]*\d[\d.,]*%?$")
OTHER_COLUMN = "the table gives that number under another column"


def _tokens(text: str) -> list[str]:
    """The text's words as a header spells them: split at spaces only ("R-1", "lm-train-nc", "%" stay whole),
    lower-cased, edge punctuation and numbers left out."""
    tokens = (t.strip(_EDGE).casefold() for t in text.split())
    return [t for t in tokens if t and not _NUMBER.match(t)]


def _names(text: str) -> set[str]:
    """The words that name a column: function words left out unless they are all there is ("All")."""
    tokens = _tokens(text)
    named = {t for t in tokens if t not in STOP_WORDS}
    return named or set(tokens)


def cell_reads(row: RowText) -> list[tuple[int, int, str]]:
    """Each cell of the row as (start, end, what the model reads): the cell's span, to quote and outline
    exactly that cell, and the cell with the row's name in front, so the model knows whose value it is."""
    return [(start, end, row.prefix + row.text[start:end]) for start, end in row.cells]


def other_column(claim: str, window: str) -> CheckResult | None:
    """Why a table row cannot support ``claim``: the claim names a column of the row and gives a number the
    row prints only under columns it names less well ("MAG F1 ... 9.4" where 9.4 is the MeSH F1 cell).
    None when the window is not a row, or the claim names no column of it, or each of its numbers sits
    under a column that matches the claim's words best."""
    row = read_row(window)
    if row is None:
        return None
    cells = [(set(numbers(row.cell_text(i))), _names(row.cell_text(i))) for i in range(len(row.cells))]
    header_words = set().union(*(words for _, words in cells)) if cells else set()
    claimed = set(_tokens(claim)) & header_words - _names(row.stub)
    match: list[int] = []
    for _, words in cells:
        # A part with no words of its own ("0.03" of "0.35 ± 0.03", its "±" lost) belongs to the cell before it.
        match.append(len(words & claimed) if words or not match else match[-1])
    best = max(match, default=0)
    if best == 0:
        return None  # the claim names none of the row's columns: nothing to hold its numbers against
    for number in numbers(claim):
        holders = [m for (values, _), m in zip(cells, match, strict=True) if number in values]
        if holders and max(holders) < best:
            return CheckResult("number", f"{OTHER_COLUMN} ({number})", False)
    return None
