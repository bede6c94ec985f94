"""Parse and rewrite ``[n]`` citation markers: ``[1]``, ``[1, 3]``, ``[1][2]``, ``[1-3]``, ``[1–3]``.

Only brackets holding numbers, commas, semicolons and ranges count as markers; ``[a]`` or
``[Figure 2]`` are left as text. Ranges are expanded but capped, so ``[1-99999]`` cannot blow up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

MAX_RANGE = 20  # a model writing [1-500] gets the first MAX_RANGE numbers, not 500 citations

# The one definition of a marker: the renderers, the sentence splitter and the UI use it from here.
MARKER = re.compile(r"\[\s*\d+(?:\s*(?:[-–—]|,|;)\s*\d+)*\s*\]")
_PART = re.compile(r"(\d+)(?:\s*[-–—]\s*(\d+))?")


@dataclass(frozen=True)
class Marker:
    """One bracketed marker: where it is in the text and the numbers it names, in order."""

    start: int
    end: int
    numbers: tuple[int, ...]


def parse_numbers(body: str) -> tuple[int, ...]:
    """The numbers in a marker body such as ``"1, 3-5"``, ranges expanded, duplicates dropped."""
    numbers: list[int] = []
    for first, last in _PART.findall(body):
        low = int(first)
        high = int(last) if last else low
        if high < low:
            low, high = high, low
        for n in range(low, min(high, low + MAX_RANGE - 1) + 1):
            if n not in numbers:
                numbers.append(n)
    return tuple(numbers)


def find_markers(text: str) -> list[Marker]:
    """Every marker in ``text``; adjacent markers such as ``[1][2]`` are reported separately."""
    return [Marker(m.start(), m.end(), parse_numbers(m.group()[1:-1])) for m in MARKER.finditer(text)]


def cited_numbers(text: str) -> list[int]:
    """All numbers cited in ``text``, in order of first appearance."""
    seen: list[int] = []
    for marker in find_markers(text):
        for n in marker.numbers:
            if n not in seen:
                seen.append(n)
    return seen


def format_marker(numbers: Iterable[int]) -> str:
    """``[1]`` or ``[1, 3]``; an empty list gives ``""``."""
    ordered = list(dict.fromkeys(numbers))
    return f"[{', '.join(str(n) for n in ordered)}]" if ordered else ""


def strip_markers(text: str) -> str:
    """The text without any marker, with the space before a removed marker removed too."""
    return _tidy(MARKER.sub("", text))


def rewrite_markers(text: str, mapping: Callable[[int], int | None]) -> str:
    """Renumber every marker through ``mapping``; numbers mapped to ``None`` are removed, and a
    marker left empty disappears with the space before it."""
    def replace(match: re.Match[str]) -> str:
        kept = [m for m in (mapping(n) for n in parse_numbers(match.group()[1:-1])) if m is not None]
        return format_marker(kept)

    return _tidy(MARKER.sub(replace, text))


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]+([.,;:!?])", r"\1", text)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


class StreamFilter:
    """Filters streamed text so no marker naming an unknown number ever reaches the screen.

    Text after an opening ``[`` is held back until the bracket closes (or clearly is not a
    marker), then released with unknown numbers removed; everything else passes at once.
    """

    _HOLD_LIMIT = 24
    _MAY_BE_MARKER = re.compile(r"\[[\d\s,;\-–—]*\]?")

    def __init__(self, valid: set[int]) -> None:
        self.valid = valid
        self._held = ""
        # Held brackets a newer "[" opened inside ("[[0]0]"): each takes back what its inner one releases,
        # since an unknown marker removed inside may leave the outer one a marker ("[" + "0]").
        self._outer: list[str] = []

    def feed(self, piece: str) -> str:
        out: list[str] = []
        for char in piece:
            if self._held and char == "[":
                self._outer.append(self._held)
                self._held = char
            elif self._held:
                self._held += char
                if char == "]" or len(self._held) > self._HOLD_LIMIT or not self._MAY_BE_MARKER.fullmatch(self._held):
                    out.append(self._settle())
            elif char == "[":
                self._held = char
            else:
                out.append(char)
        return "".join(out)

    def flush(self) -> str:
        text = self._release()
        while self._outer:
            text = self._outer.pop() + text
        return text

    def _settle(self) -> str:
        """Release the held text into the bracket around it, which keeps holding while it may still be a marker."""
        text = self._release()
        while self._outer:
            self._held = self._outer.pop() + text
            if (len(self._held) <= self._HOLD_LIMIT and not self._held.endswith("]")
                    and self._MAY_BE_MARKER.fullmatch(self._held)):
                return ""
            text = self._release()
        return text

    def _release(self) -> str:
        held, self._held = self._held, ""
        if MARKER.fullmatch(held):
            return format_marker(n for n in parse_numbers(held[1:-1]) if n in self.valid)
        return held


def defuse_markers(text: str) -> str:
    """A paper's own citation markers made harmless: ``[17]`` -> ``(ref. 17)``.

    Quoted passage text must never carry a bracketed number the reader (or the model) could take
    for one of the answer's references.
    """
    return MARKER.sub(lambda m: f"(ref. {m.group()[1:-1].strip()})", text)
