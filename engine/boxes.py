"""Boxes on a page: the rectangles a passage, a word and a quote are drawn with.

Rectangles are in PDF points in PyMuPDF's page space (origin top-left, y grows downwards), so the UI
can draw them on a rendered page; page numbers are 1-based, as a reader sees them. Kept apart from
:mod:`engine.types` because ingest makes millions of these and packs them tightly.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import NamedTuple, overload


class Rect(NamedTuple):
    """An axis-aligned rectangle on a page, in points. A tuple: ingest makes millions of them."""

    x0: float
    y0: float
    x1: float
    y1: float

    def union(self, other: Rect) -> Rect:
        return Rect(min(self.x0, other.x0), min(self.y0, other.y0),
                    max(self.x1, other.x1), max(self.y1, other.y1))

    def within(self, box: Rect, slack: float) -> bool:
        """Whether this rectangle lies inside ``box`` widened by ``slack`` points on every side."""
        return (self.x0 >= box.x0 - slack and self.y0 >= box.y0 - slack
                and self.x1 <= box.x1 + slack and self.y1 <= box.y1 + slack)


class PageRect(NamedTuple):
    """A rectangle on a given (1-based) page."""

    page: int
    rect: Rect


class WordBox(NamedTuple):
    """One word of a passage: its character span in the passage text and its box on the page."""

    start: int
    end: int
    page: int
    rect: Rect


WORD_FIELDS = 7  # start, end, page, x0, y0, x1, y1


class WordBoxes(Sequence[WordBox]):
    """A passage's word boxes packed as float32, seven numbers a word, read as :class:`WordBox` on demand.

    Ingest makes a few hundred thousand word boxes per library; packing them avoids a Python object
    per word and lets the catalog store the bytes as they are. float32 holds character offsets and
    page numbers exactly up to 16 million, and coordinates to well under a thousandth of a point.
    """

    __slots__ = ("_flat",)

    def __init__(self, flat: array[float] | None = None) -> None:
        self._flat: array[float] = flat if flat is not None else array("f")

    @classmethod
    def from_bytes(cls, blob: bytes) -> WordBoxes:
        flat = array("f")
        flat.frombytes(blob)
        return cls(flat)

    @classmethod
    def of(cls, words: Sequence[WordBox]) -> WordBoxes:
        """Pack any sequence of word boxes (a ``WordBoxes`` is returned as it is)."""
        if isinstance(words, WordBoxes):
            return words
        flat = array("f")
        for start, end, page, (x0, y0, x1, y1) in words:
            flat.extend((start, end, page, x0, y0, x1, y1))
        return cls(flat)

    @property
    def flat(self) -> array[float]:
        """The packed numbers (do not modify)."""
        return self._flat

    def tobytes(self) -> bytes:
        return self._flat.tobytes()

    def __len__(self) -> int:
        return len(self._flat) // WORD_FIELDS

    @overload
    def __getitem__(self, index: int) -> WordBox: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[WordBox, ...]: ...
    def __getitem__(self, index: int | slice) -> WordBox | tuple[WordBox, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        count = len(self)
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError("word index out of range")
        f, i = self._flat, index * WORD_FIELDS
        return WordBox(int(f[i]), int(f[i + 1]), int(f[i + 2]), Rect(f[i + 3], f[i + 4], f[i + 5], f[i + 6]))

    def __iter__(self) -> Iterator[WordBox]:
        f = self._flat
        for i in range(0, len(f), WORD_FIELDS):
            yield WordBox(int(f[i]), int(f[i + 1]), int(f[i + 2]), Rect(f[i + 3], f[i + 4], f[i + 5], f[i + 6]))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, WordBoxes):
            return self._flat == other._flat
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"WordBoxes({len(self)} words)"


def merge_word_boxes(words: Sequence[WordBox]) -> tuple[PageRect, ...]:
    """Merge consecutive words on one text line into one rectangle per line.

    A word continues the current line when it is on the same page, starts to the right of the
    line's start and overlaps the line vertically by more than half its height.
    """
    merged: list[PageRect] = []
    page = -1
    x0 = y0 = x1 = y1 = 0.0
    for _, _, word_page, (wx0, wy0, wx1, wy1) in words:
        if word_page == page and wx0 >= x0 - 1.0:
            overlap = min(y1, wy1) - max(y0, wy0)
            if overlap > 0.5 * min(y1 - y0, wy1 - wy0):
                x0, y0, x1, y1 = min(x0, wx0), min(y0, wy0), max(x1, wx1), max(y1, wy1)
                continue
        if page != -1:
            merged.append(PageRect(page, Rect(x0, y0, x1, y1)))
        page, x0, y0, x1, y1 = word_page, wx0, wy0, wx1, wy1
    if page != -1:
        merged.append(PageRect(page, Rect(x0, y0, x1, y1)))
    return tuple(merged)
