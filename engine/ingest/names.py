"""Person names: parsed into given and family parts, never copied as they come.

Papers print "Given Family"; reference managers and some publishers' Info dictionaries write
"Family, Given" or "Family Given" (Oxford's "Grüschow Sabine"). A name is kept as one display
string ("Sabine Grüschow", NFC); :func:`split_name` reads it back, keeping particles ("van",
"de", "von") with the family name and a two-word family name written "Family, Given" intact.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import NamedTuple

from rapidfuzz import fuzz

from engine.text.characters import ascii_fold

PARTICLES = frozenset(
    {"van", "von", "de", "der", "den", "da", "del", "della", "di", "du", "la", "le", "dos", "das", "ter", "zu",
     "uz", "bin", "al", "el"})
_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
_INITIAL = re.compile(r"^(?:[^\W\d_]\.?-?){1,3}$")  # "R.", "J.-P.", "DM" after a family name


class PersonName(NamedTuple):
    given: str
    family: str

    def display(self) -> str:
        """``Given Family``, or ``Family, Given`` when the family name alone has several words
        (so it is read back whole: "Rodríguez Montoya, Iván")."""
        if not self.given:
            return self.family
        if " " in self.family and self.family.split()[0].lower() not in PARTICLES:
            return f"{self.family}, {self.given}"
        return f"{self.given} {self.family}"


def clean_name(text: str) -> str:
    """NFC, single spaces, no stray punctuation at the ends."""
    return " ".join(unicodedata.normalize("NFC", text).split()).strip(" ,;")


def split_name(text: str) -> PersonName:
    """``"Family, Given"`` or ``"Given [particles] Family [Jr.]"`` as given and family parts."""
    text = clean_name(text)
    if "," in text:
        family, given = (part.strip() for part in text.split(",", 1))
        if given.lower().strip(". ") in {s.strip(".") for s in _SUFFIXES}:
            return split_name(family)
        return PersonName(given, family)
    tokens = text.split()
    if not tokens:
        return PersonName("", "")
    suffix = tokens[-1].lower() in _SUFFIXES and len(tokens) > 2
    core = tokens[:-1] if suffix else tokens
    start = len(core) - 1
    while start > 1 and core[start - 1].lower() in PARTICLES:
        start -= 1
    return PersonName(" ".join(core[:start]), " ".join(core[start:]))


def family_name(text: str) -> str:
    """The family name of a display name (``"Madeleine van Zuylen"`` -> ``"van Zuylen"``)."""
    return split_name(text).family


def looks_surname_first(name: str) -> bool:
    """``"Averill Jameson R."``: initials after the given name show the family name came first."""
    tokens = clean_name(name).split()
    return len(tokens) >= 2 and bool(_INITIAL.match(tokens[-1])) and not _INITIAL.match(tokens[0])


def reverse(name: str) -> str:
    """``"Grüschow Sabine"`` -> ``"Sabine Grüschow"``; ``"Averill Jameson R."`` -> ``"Jameson R. Averill"``."""
    tokens = clean_name(name).split()
    return " ".join([*tokens[1:], tokens[0]]) if len(tokens) >= 2 else clean_name(name)


def _fold(text: str) -> str:
    return re.sub(r"[^a-z]", "", ascii_fold(text).lower())


def orient(names: Sequence[str], evidence: str) -> tuple[str, ...]:
    """``names`` in "Given Family" order, reversing those a source wrote family name first.

    ``evidence`` is text printing the names in reading order (the first page): a name whose
    reversal is printed there and whose own order is not was written family name first. Without
    that, trailing initials ("Adams Myfanwy C.") give it away. Comparison ignores accents, case
    and spacing, so a text layer that split "Grüsc ho w" or an Info dictionary that lost the "ü"
    still match.
    """
    page = _fold(evidence)
    out: list[str] = []
    for name in names:
        name = clean_name(name)
        if "," in name:
            out.append(split_name(name).display())
            continue
        flipped = reverse(name)
        as_is, other = _fold(name), _fold(flipped)
        # Near matches count: an Info dictionary may have lost a letter ("Grschow" for "Grüschow").
        score_as_is = fuzz.partial_ratio(as_is, page) if as_is and page else 0.0
        score_other = fuzz.partial_ratio(other, page) if other and page else 0.0
        printed_reversed = score_other >= 85 and score_other > score_as_is
        out.append(flipped if score_as_is < 100 and (printed_reversed or looks_surname_first(name)) else name)
    return tuple(out)
