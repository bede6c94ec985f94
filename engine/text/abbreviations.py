"""Words that end in a full stop without ending a sentence ("et al.", "e.g.", "Fig.")."""

from __future__ import annotations

# Written without their final full stop and lower-cased: "Figs." is found as "figs".
ABBREVIATIONS = frozenset("""
al e.g eg i.e ie etc fig figs eq eqs sec secs tab vs cf approx resp no nos vol pp p ch dr mr ms prof
st jr sr inc ltd co corp dept univ ref refs def thm lem prop cor alg appx app ca viz
""".split())

_OPENERS = "([{\"'“‘"  # "(e.g." is "e.g." after an opening bracket


def is_abbreviation(word: str) -> bool:
    """True when ``word`` (with or without its full stop) is a known abbreviation or an initial."""
    bare = word.lower().lstrip(_OPENERS).rstrip(".")
    if bare in ABBREVIATIONS:
        return True
    return len(bare) == 1 and bare.isalpha()  # an initial: "J. Smith"
