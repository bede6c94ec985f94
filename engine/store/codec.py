"""How values are stored in the catalog's columns: word boxes as a float32 blob, a document's
bibliography as six columns of the documents table."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engine.bibliography import Bibliography
from engine.types import PageRect, Rect, TableCell, TableRow, WordBox, WordBoxes

# The documents table's bibliographic columns, in the order the two functions below use. The
# catalog stores no URL: library papers are files, found by DOI or arXiv id.
BIBLIOGRAPHY_COLUMNS = ("title", "authors", "year", "doi", "arxiv_id", "venue")


def encode_words(words: Sequence[WordBox]) -> bytes:
    """Pack word boxes into 28 bytes each; float32 keeps offsets exact up to 16 million.

    Ingest already holds them packed (:class:`WordBoxes`), so storing them copies bytes only.
    """
    return WordBoxes.of(words).tobytes()


def decode_words(blob: bytes) -> WordBoxes:
    """The stored boxes, unpacked into :class:`WordBox` objects only when they are read."""
    return WordBoxes.from_bytes(blob)


def bibliography_columns(alias: str = "") -> str:
    """The bibliographic columns as a SELECT list, qualified with a table alias such as ``d``."""
    return ", ".join(f"{alias}.{name}" if alias else name for name in BIBLIOGRAPHY_COLUMNS)


def encode_bibliography(bib: Bibliography) -> tuple[Any, ...]:
    """The values for :data:`BIBLIOGRAPHY_COLUMNS` (authors as a JSON list)."""
    return bib.title, json.dumps(list(bib.authors)), bib.year, bib.doi, bib.arxiv_id, bib.venue


def decode_bibliography(values: Sequence[Any]) -> Bibliography:
    """A document's bibliography from its :data:`BIBLIOGRAPHY_COLUMNS` values."""
    title, authors, year, doi, arxiv_id, venue = values
    return Bibliography(title=title or "", authors=tuple(json.loads(authors or "[]")), year=year, doi=doi or "",
                        arxiv_id=arxiv_id or "", venue=venue or "")


def encode_table_row(row: TableRow | None) -> str:
    """A table row's table and cells as compact JSON; "" for a passage that is no row."""
    if row is None:
        return ""
    return json.dumps({"table": row.table, "label": row.label, "caption": row.caption, "page": row.page,
                       "row": row.row, "headers": list(row.headers),
                       "cells": [[cell.col, cell.text, cell.header, *cell.rect]
                                 for cell in row.cells], **({"notes": list(row.notes)} if row.notes else {})},
                      ensure_ascii=False, separators=(",", ":"))


def decode_table_row(data: str) -> TableRow | None:
    """The :class:`TableRow` stored by :func:`encode_table_row`, or None."""
    if not data:
        return None
    value = json.loads(data)
    return TableRow(value["table"], value["label"], value["caption"], value["page"], value["row"],
                    tuple(value["headers"]),
                    tuple(TableCell(cell[0], cell[1], cell[2], Rect(*cell[3:7])) for cell in value["cells"]),
                    tuple(value.get("notes", ())))


def encode_figure_region(region: PageRect | None) -> str:
    """A figure's page and box as a JSON list; "" for a passage that belongs to no figure."""
    return "" if region is None else json.dumps([region.page, *(round(v, 2) for v in region.rect)])


def decode_figure_region(data: str) -> PageRect | None:
    """The region stored by :func:`encode_figure_region`, or None."""
    if not data:
        return None
    page, *box = json.loads(data)
    return PageRect(int(page), Rect(*box))
