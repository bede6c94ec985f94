"""Compact encodings for what is stored per passage: word boxes as a float32 blob."""

from __future__ import annotations

from collections.abc import Sequence

from engine.types import WordBox, WordBoxes


def encode_words(words: Sequence[WordBox]) -> bytes:
    """Pack word boxes into 28 bytes each; float32 keeps offsets exact up to 16 million.

    Ingest already holds them packed (:class:`WordBoxes`), so storing them copies bytes only.
    """
    return WordBoxes.of(words).tobytes()


def decode_words(blob: bytes) -> WordBoxes:
    """The stored boxes, unpacked into :class:`WordBox` objects only when they are read."""
    return WordBoxes.from_bytes(blob)
