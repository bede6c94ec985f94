"""A second reading of a claim in the words its sources use, for the support judge.

Writers answer "Which metal ion ...?" with "The metal ion that coordinates binding of cyclic
tetra-adenylate to Csx23 is sodium." while the paper says "cA4 ... and a coordinating sodium ion".
The small judge reads neither the sentence's shape nor the paper's abbreviation, so the same fact
is judged neutral. The second reading undoes both, and the judge takes whichever reading a window
supports (the checks apply to both):

- abbreviations the sources define ("cyclic tetra-adenylate (cA4)") replace their long forms;
- a number is written as the passage writes the same value ("81.1 million" as "81.1M": read as they stood,
  "S2ORC contains 81.1 million papers." against "S2ORC consists of 81.1M papers." was judged contradicted);
- a specificational sentence "The X that/which Y is Z." becomes "Z Y." ("Sodium coordinates ...").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

# "long form (SHORT)": a short form of 2-10 characters with a capital or digit, in parentheses.
_DEFINITION = re.compile(r"((?:[\w-]+\s+){1,6}[\w-]+)\s*\(\s*([A-Za-z][\w-]{1,9}?)\s*\)")
# A number with its scale: "81.1 million", "81.1M", "146K", "2.5bn", or written out in full with thousands
# separators ("81,100,000"). A letter counts only glued to its number: "0.5 M NaCl" is a concentration.
_SCALED = re.compile(r"(?<![\w.,])(\d+(?:\.\d+)?)(?:\s?(thousand|million|billion|trillion)\b|(K|M|B|bn|mn)\b)"
                     r"|(?<![\w.,])(\d{1,3}(?:,\d{3})+)(?![\w,]|\.\d)")
_SCALE = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "billion": 1e9, "b": 1e9, "bn": 1e9,
          "trillion": 1e12}
_CLEFT = re.compile(r"^(?:the|a|an)\s+[^,;]{2,80}?\s+(?:that|which|who)\s+(?P<rest>[^,;]+?)\s+"
                    r"(?:is|are|was|were)\s+(?P<answer>[^,;]{1,80}?)\s*[.!]?$", re.IGNORECASE)


def abbreviations(texts: Iterable[str]) -> dict[str, str]:
    """{long form (lower case): short form} for each "long form (SHORT)" the texts define, where the
    short form's letters appear in order in the long form and its first letter starts its first word
    (Schwartz and Hearst's rule, simplified)."""
    found: dict[str, str] = {}
    for text in texts:
        for match in _DEFINITION.finditer(" ".join(text.split())):
            short = match.group(2)
            if not any(c.isupper() or c.isdigit() for c in short[1:] + short[0]):
                continue  # "(see)" or "(and)" is not an abbreviation
            long_form = _long_form(match.group(1).split(), short)
            if long_form and long_form.lower() != short.lower():
                found[long_form.lower()] = short
    return found


def _long_form(words: list[str], short: str) -> str:
    """The fewest trailing ``words`` that spell ``short``'s letters: its first letter starts the first
    word and the rest follow in order."""
    letters = [c.lower() for c in short if c.isalpha()]  # digits are spelled out ("tetra" for 4)
    for size in range(1, min(len(words), len(letters) + 3) + 1):
        candidate = words[-size:]
        if not candidate[0].lower().startswith(letters[0]):
            continue
        text, position = " ".join(candidate).lower(), 1
        for letter in letters[1:]:
            position = text.find(letter, position) + 1
            if position == 0:
                break
        else:
            return " ".join(candidate)
    return ""


def _value(match: re.Match[str]) -> float:
    if match.group(4):
        return float(match.group(4).replace(",", ""))
    scale = (match.group(2) or match.group(3)).lower()
    return float(match.group(1)) * _SCALE[scale]


def in_passage_numbers(claim: str, passage: str) -> str:
    """``claim`` with each number that has a scale written as ``passage`` writes the same value, where it does."""
    written: dict[float, str] = {}
    for match in _SCALED.finditer(passage):
        written.setdefault(_value(match), match.group(0))

    def as_written(match: re.Match[str]) -> str:
        value = _value(match)
        same = next((text for known, text in written.items() if abs(known - value) <= 1e-9 * max(known, value)), None)
        return same if same is not None else match.group(0)

    return _SCALED.sub(as_written, claim)


def second_reading(claim: str, aliases: Mapping[str, str], passage: str = "") -> str:
    """The claim with defined long forms replaced by their abbreviations, its numbers written as ``passage``
    writes them, and a specificational sentence turned round; empty when none applies."""
    reading = in_passage_numbers(claim.strip(), passage) if passage else claim.strip()
    for long_form, short in sorted(aliases.items(), key=lambda item: -len(item[0])):
        reading = re.sub(rf"\b{re.escape(long_form)}\b(\s*\({re.escape(short)}\))?", short, reading,
                         flags=re.IGNORECASE)
    match = _CLEFT.match(reading)
    if match:
        answer = match.group("answer").strip()
        reading = f"{answer[0].upper()}{answer[1:]} {match.group('rest').strip()}."
    return reading if reading != claim.strip() else ""
