"""Compact encodings for what is stored per passage: word boxes as a float32 blob."""

from __future__ import annotations

from array import array

from engine.types import Rect, WordBox

_FIELDS = 7  # start, end, page, x0, y0, x1, y1


def encode_words(words: tuple[WordBox, ...] | list[WordBox]) -> bytes:
    """Pack word boxes into 28 bytes each; float32 keeps offsets exact up to 16 million."""
    flat = array("f")
    for start, end, page, (x0, y0, x1, y1) in words:
        flat.extend((start, end, page, x0, y0, x1, y1))
    return flat.tobytes()


def decode_words(blob: bytes) -> tuple[WordBox, ...]:
    flat = array("f")
    flat.frombytes(blob)
    return tuple(
        WordBox(int(flat[i]), int(flat[i + 1]), int(flat[i + 2]),
                Rect(flat[i + 3], flat[i + 4], flat[i + 5], flat[i + 6]))
        for i in range(0, len(flat), _FIELDS))
