"""How values are stored in the catalog's columns: word boxes as a float32 blob, a document's
bibliography as six columns of the documents table."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engine.bibliography import Bibliography
from engine.types import WordBox, WordBoxes

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
