"""The names a sentence gives, and whether a text mentions them.

A name is what authors spell one way: a word with two capitals or more in one of its hyphen-joined parts
(SPECTER, ReVerb, DNA-PKcs, but not a title's "Cavity-Based"), a capital after a small letter (katE) or letters
and digits together (S2ORC, E251Q); Roman numerals are not. Matching ignores case, spaces and hyphens ("HEK
293T", "SciB-ERT" split by a line break) and a plural "s" (LLMs).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_WORD = re.compile(r"[A-Za-z0-9]+(?:[-‐/][A-Za-z0-9]+)*")
_ROMAN = re.compile(r"^[IVXLC]+$")
_CAMEL = re.compile(r"[a-z][A-Z]")
_TWO_CAPITALS = re.compile(r"[A-Z][^-‐/]*[A-Z]")
_SPACING = re.compile(r"[\s\-‐‑–/]+")


def names(text: str) -> list[str]:
    """The names ``text`` gives, in order, each once."""
    found: list[str] = []
    for word in _WORD.findall(text):
        if _ROMAN.match(word) or word in found:
            continue
        letters, digits = re.search(r"[A-Za-z]", word), re.search(r"\d", word)
        if _CAMEL.search(word) or (letters and digits) or _TWO_CAPITALS.search(word):
            found.append(word)
    return found


def squeezed(text: str) -> str:
    """``text`` lower-cased, without spaces and hyphens: what names are matched in."""
    return _SPACING.sub("", text.lower())


def _forms(name: str) -> set[str]:
    """The name as matched, and without a plural "s" after a capital or digit (LLMs -> LLM)."""
    forms = {squeezed(name)}
    if len(name) > 2 and name.endswith("s") and (name[-2].isupper() or name[-2].isdigit()):
        forms.add(squeezed(name[:-1]))
    return forms


def mentioned(name: str, texts: Iterable[str]) -> bool:
    """Whether one of ``texts`` mentions ``name``."""
    return squeezed_in(name, [squeezed(text) for text in texts])


def squeezed_in(name: str, squeezed_texts: Sequence[str]) -> bool:
    """Whether one of ``squeezed_texts`` (each already :func:`squeezed`) mentions ``name``."""
    forms = _forms(name)
    return any(form in text for text in squeezed_texts for form in forms)
