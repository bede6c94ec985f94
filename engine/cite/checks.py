"""Cheap, sure checks of a claim against a quote: numbers, negation, direction.

A small entailment model reads "accuracy rose to 85.3 %" and "accuracy rose to 58.3 %" as nearly
the same sentence; these checks do not. Each returns a reason (for the user) when the claim and
the window disagree, else None:

- every number in the claim (citation markers and years in parentheses aside) must appear in the
  window, as the same value (1,000 = 1000; 0.5 = .5);
- a negation in the claim ("not", "no", "never", "without", "fails to") whose next content words
  the window has without any negation of its own, or the other way round, is a polarity clash;
- a direction word in the claim (increase, higher, improves, outperforms, ...) whose opposite the
  window uses, while the window never uses the claim's word, is a direction clash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.cite.markers import find_markers, strip_markers
from engine.cite.support import content_words, stem

# A number may carry a unit letter ("81.1M", "3x"), but not sit inside a word ("S2ORC", "fp16").
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d*\.\d+|\d+)(?![\d,.]\d|\d)")
_NEGATION = re.compile(r"\b(not|no|never|without|cannot|none|neither|nor|fails?\s+to|failed\s+to|lacks?|"
                       r"unable\s+to)\b|n't\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NUMBER_WORDS = {word: str(value) for value, word in enumerate(
    "zero _ two three four five six seven eight nine ten eleven twelve".split()) if word != "_"}
_NUMBER_WORDS.update({"twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100"})

_OPPOSITES = {
    "increase": "decrease", "higher": "lower", "more": "less", "better": "worse", "improve": "worsen",
    "outperform": "underperform", "larger": "smaller", "faster": "slower", "above": "below",
    "positive": "negative", "maximize": "minimize", "gain": "loss", "best": "worst", "rise": "fall",
    "greater": "smaller", "superior": "inferior", "efficient": "inefficient", "effective": "ineffective",
    "stable": "unstable", "accurate": "inaccurate", "easier": "harder", "enhance": "impair",
}
_DIRECTION_GROUPS: dict[str, str] = {}
for _up, _down in _OPPOSITES.items():
    _DIRECTION_GROUPS.setdefault(_up, f"+{_up}")
    _DIRECTION_GROUPS.setdefault(_down, f"-{_up}")
# Inflections the light stemmer leaves apart ("increases" -> "increase", "reduced" -> "reduc").
_SYNONYMS = {"reduce": "decrease", "reduc": "decrease", "decreas": "decrease", "increas": "increase",
             "improv": "improve", "degrade": "worsen", "degrad": "worsen", "hurt": "worsen", "drop": "fall",
             "declin": "fall", "decline": "fall", "grow": "rise", "fewer": "less",
             "lowered": "lower", "outperform": "outperform", "underperform": "underperform"}


@dataclass(frozen=True)
class CheckResult:
    """Why a window cannot support a claim: ``kind`` is "number", "negation" or "direction"."""

    kind: str
    reason: str
    contradicts: bool  # the window says the opposite (polarity/direction) rather than just not saying it


def numbers(text: str) -> list[str]:
    """Numbers written in ``text`` (citation markers removed), normalised: "1,000" -> "1000", ".5" -> "0.5",
    "seven" -> "7" ("one" is left out: it is more often a pronoun than a count)."""
    found = []
    for marker in reversed(find_markers(text)):  # blanked, not stripped: the spacing around stays as it was
        text = text[:marker.start] + " " * (marker.end - marker.start) + text[marker.end:]
    for match in _NUMBER.finditer(text):
        found.append(_normalise_number(match.group(1)))
    found.extend(_NUMBER_WORDS[w.lower()] for w in _WORD.findall(text) if w.lower() in _NUMBER_WORDS)
    return found


def _normalise_number(raw: str) -> str:
    value = raw.replace(",", "")
    if "." in value:
        value = value.rstrip("0").rstrip(".") or "0"
        if value.startswith("."):
            value = "0" + value
    return value.lstrip("0") or "0" if "." not in value else value


def missing_numbers(claim: str, window: str) -> list[str]:
    """Numbers of the claim the window does not contain."""
    have = set(numbers(window))
    return [n for n in dict.fromkeys(numbers(claim)) if n not in have]


def _keys(text: str) -> list[str]:
    """Content words as comparison keys, in order: the light stemmer's output cut to five letters,
    so that "requires", "require" and "required" meet."""
    return [stem(word)[:5] for word in (w.lower() for w in _WORD.findall(text)) if content_words(word)]


def _negation_scopes(text: str) -> list[set[str]]:
    """For each negation cue, the keys of the next three content words (what is negated)."""
    return [set(_keys(text[match.end():match.end() + 80])[:3]) for match in _NEGATION.finditer(text)]


def negation_clash(claim: str, window: str) -> bool:
    """A negation on one side, not matched by a negation of the same words on the other side, whose
    negated words the other side states ("cannot be applied" against "can be applied")."""
    claim_text = strip_markers(claim)
    claim_keys, window_keys = set(_keys(claim_text)), set(_keys(window))
    claim_scopes, window_scopes = _negation_scopes(claim_text), _negation_scopes(window)

    def unmatched(scopes: list[set[str]], others: list[set[str]]) -> list[set[str]]:
        return [scope for scope in scopes if scope and not any(scope & other for other in others)]

    if any(len(scope & window_keys) >= max(1, len(scope) - 1) for scope in unmatched(claim_scopes, window_scopes)):
        return True
    return any(len(scope) >= 2 and len(scope & claim_keys) >= len(scope) - 1
               for scope in unmatched(window_scopes, claim_scopes))


def _directions(text: str) -> set[str]:
    signed = set()
    for word in _WORD.findall(text.lower()):
        base = stem(word)
        base = _SYNONYMS.get(base, _SYNONYMS.get(word, base))
        group = _DIRECTION_GROUPS.get(base) or _DIRECTION_GROUPS.get(word)
        if group:
            signed.add(group)
    return signed


def direction_clash(claim: str, window: str) -> bool:
    """The claim says "higher" where the window only says "lower" (about the same things)."""
    claim_dirs, window_dirs = _directions(strip_markers(claim)), _directions(window)
    for signed in claim_dirs:
        opposite = ("-" if signed[0] == "+" else "+") + signed[1:]
        if opposite in window_dirs and signed not in window_dirs:
            return True
    return False


def check(claim: str, window: str) -> CheckResult | None:
    """The first disagreement between a claim and a window, or None when the checks find none."""
    missing = missing_numbers(claim, window)
    if missing:
        shown = ", ".join(missing[:3])
        return CheckResult("number", f"the passage does not give the number{'s' if len(missing) > 1 else ''} "
                                     f"{shown}", contradicts=False)
    if negation_clash(claim, window):
        return CheckResult("negation", "the passage states it without the claim's negation (or the other way round)",
                           contradicts=True)
    if direction_clash(claim, window):
        return CheckResult("direction", "the passage gives the opposite direction (e.g. lower, not higher)",
                           contradicts=True)
    return None
