"""Cheap, sure checks of a claim against a quote: numbers, negation, direction.

A small entailment model reads "accuracy rose to 85.3 %" and "accuracy rose to 58.3 %" as nearly
the same sentence; these checks do not. Each returns a reason (for the user) when the claim and
the window disagree, else None:

- every number in the claim (citation markers and years in parentheses aside) must appear in the
  window, as the same value (1,000 = 1000; 0.5 = .5), and not only as the value of something
  else: when the word naming a claim's number names another number in the window and never this
  one ("r = 1" against a window with "r = 0" and "models 1-4"), the window gives that thing
  another value; a name with digits ("IL-6", "H1N1") must not be given with other digits ("IL-8") and never
  as the claim has it, and the digits that end a name ("COVID-19") are no number;
- a negation in the claim ("not", "no", "never", "without", "fails to") whose next content words
  the window has without any negation of its own, or the other way round, is a polarity clash;
- a direction word in the claim (increase, higher, improves, outperforms, ...) whose opposite the
  window uses, while the window never uses the claim's word, is a direction clash;
- a clause the claim adds after its main one (", which shows ...", "; moreover ...") must be in the
  window too: when most of its content words are not, the window supports at most the main clause;
- every item of a list the claim gives ("fever, cough, shortness of breath, and fatigue") must be
  named in the window: a passage on the topic that names none of the items does not support the
  list (a small model reads such a claim as supported by any passage about its subject).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.cite.markers import find_markers, strip_markers
from engine.cite.windows import content_words
from engine.text.stem import stem
from engine.text.stopwords import NUMBER_FRAME_WORDS
from engine.text.tokens import LETTERS, WORD
from engine.tuning import CITATION

# A number may carry a unit letter ("81.1M", "3x"), but not sit inside a word ("S2ORC", "fp16") or end a name
# after a hyphen ("COVID-19", "SARS-CoV-2", "IL-6"): those digits name a thing, they count nothing. HealthVer's
# claims say "COVID-19" where the abstract says "the virus", and the "19" vetoed 38 of the 98 true claims that
# the model itself found supported.
_NUMBER = re.compile(r"(?<![\w.])(?<![^\W\d_]-)(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d*\.\d+|\d+)(?![\d,.]\d|\d)")
# A name with digits in it ("COVID-19", "Covid19", "H1N1", "IL-6"): it starts with a letter ("3-fold" is a count).
_NUMBERED_NAME = re.compile(r"(?<![\w-])(?=[^\W\d_])(?=[\w-]*\d)[\w-]*\w")
_WORD_THEN_NUMBER = re.compile(r"\b([^\W\d_]+) (\d+)\b")  # "Covid 19": a name written with a space
_NEGATION = re.compile(r"\b(not|no|never|without|cannot|none|neither|nor|fails?\s+to|failed\s+to|lacks?|"
                       r"unable\s+to)\b|n't\b", re.IGNORECASE)
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
# Stems and words that name the same direction ("increases" -> "increas", "reduced" -> "reduc"). Higher and
# lower are one group with increase and decrease: "supplementation lowers Treg levels" against "Treg levels
# can be increased by supplementation" is the opposite claim, whichever word each side chose.
_SYNONYMS = {"reduce": "decrease", "reduc": "decrease", "decreas": "decrease", "increas": "increase",
             "improv": "improve", "degrade": "worsen", "degrad": "worsen", "hurt": "worsen", "drop": "fall",
             "declin": "fall", "decline": "fall", "grow": "rise", "fewer": "less",
             "higher": "increase", "lower": "decrease", "lowered": "decrease", "rais": "increase",
             "raise": "increase", "elev": "increase", "outperform": "outperform", "underperform": "underperform"}


# Where a claim's main clause ends and an added one begins ("X does Y, which shows Z").
_CLAUSE = re.compile(r"(?:,\s*(?:which|and thus|thus|thereby|so that|so|while|whereas|and this|and it|and|but|"
                     r"making|leading to|showing|demonstrating|suggesting)\b|;\s*)", re.IGNORECASE)
# An added clause is stated by the window when at least this share of its content words is there
# (set by hand: engine/tuning.py).
ADDED_CLAUSE_COVERAGE = CITATION.added_clause_coverage


@dataclass(frozen=True)
class CheckResult:
    """Why a window cannot support a claim: ``kind`` is "number", "negation", "direction", "added" or "list"."""

    kind: str
    reason: str
    contradicts: bool  # the window says the opposite (polarity/direction) rather than just not saying it


def numbers(text: str) -> list[str]:
    """Numbers written in ``text`` (citation markers removed), normalised: "1,000" -> "1000", ".5" -> "0.5",
    "seven" -> "7" ("one" is left out: it is more often a pronoun than a count)."""
    found = []
    text = _blank_markers(text)
    for match in _NUMBER.finditer(text):
        found.append(_normalise_number(match.group(1)))
    found.extend(_NUMBER_WORDS[w.lower()] for w in WORD.findall(text) if w.lower() in _NUMBER_WORDS)
    return found


def _blank_markers(text: str) -> str:
    """Citation markers blanked, not stripped: the spacing around them stays as it was."""
    for marker in reversed(find_markers(text)):
        text = text[:marker.start] + " " * (marker.end - marker.start) + text[marker.end:]
    return text


def _normalise_number(raw: str) -> str:
    value = raw.replace(",", "")
    if "." in value:
        value = value.rstrip("0").rstrip(".") or "0"
        if value.startswith("."):
            value = "0" + value
    return value.lstrip("0") or "0" if "." not in value else value


def numbered_names(text: str) -> list[str]:
    """The names with digits in ``text`` ("COVID-19", "H1N1"), as written, citation markers aside."""
    return _NUMBERED_NAME.findall(_blank_markers(text))


def missing_numbers(claim: str, window: str) -> list[str]:
    """Numbers of the claim the window does not contain. A number that the window writes as part of a name
    with the word before it ("Covid 19" against "COVID-19") is that name, not a missing count."""
    have = set(numbers(window))
    missing = [n for n in dict.fromkeys(numbers(claim)) if n not in have]
    if not missing:
        return missing
    names = {name.lower().replace("-", "") for name in numbered_names(window)}
    named = {match.group(2) for match in _WORD_THEN_NUMBER.finditer(_blank_markers(claim))
             if (match.group(1) + match.group(2)).lower() in names}
    return [n for n in missing if n not in named]


_TOKEN = re.compile(r"(?P<number>" + _NUMBER.pattern + r")|(?P<word>" + LETTERS.pattern + ")")


def _number_neighbours(text: str) -> list[tuple[str, set[str]]]:
    """Each written number of ``text`` (markers blanked) with the word before it, the name it is the
    value of ("r = 0", "models 5", "accuracy of 85"), function words ("of", "and") passed over. The
    word after is most often a unit or a counted noun ("162 papers", "119 papers"), which one text
    gives many values of, so it is not taken."""
    text = _blank_markers(text)
    found = []
    before = ""  # the key of the last word before the current token, function words passed over
    for match in _TOKEN.finditer(text):
        if match.group("number"):
            # group 2 is _NUMBER's own value group, inside the "number" group
            found.append((_normalise_number(match.group(2)), {before} - {""}))
            before = ""  # a number ends the reach back: "5 and 7" gives 7 no name
            continue
        lowered = match.group("word").lower()
        if lowered not in NUMBER_FRAME_WORDS:
            before = stem(lowered)[:5]
    return found


def misplaced_numbers(claim: str, window: str) -> list[str]:
    """Numbers of the claim that the window gives, but as the value of something else: the word before
    the claim's number stands before another number in the window (one the claim does not have) and
    never before this one ("r = 1" against "r = 0")."""
    claim_numbers = _number_neighbours(claim)
    claim_values = {value for value, _ in claim_numbers}
    window_numbers = _number_neighbours(window)
    misplaced = []
    for value, near in claim_numbers:
        if not near:
            continue
        beside_it = set().union(*(words for other, words in window_numbers if other == value))
        beside_others = set().union(*(words for other, words in window_numbers if other not in claim_values))
        if not near & beside_it and near & beside_others:
            misplaced.append(value)
    return list(dict.fromkeys(misplaced))


def other_numbered_names(claim: str, window: str) -> list[tuple[str, str]]:
    """(claim's name, the window's) for each name with digits in the claim that the window gives with other
    digits and never as the claim has it: "IL-6" against a window on "IL-8", "H1N1" against "H3N2".
    "COVID-19" and "Covid19" are the same name, unless the window also writes the same letters in the
    claim's way with other digits ("QW-2" against "QW-1, QW2": there the hyphen is a minus). A window that
    names no such thing (it says "the virus") leaves the claim to the model."""
    written: dict[str, str] = {}  # lower-cased -> as written
    for name in numbered_names(window):
        written.setdefault(name.lower(), name)
    found = []
    for name in dict.fromkeys(numbered_names(claim)):
        lowered = name.lower()
        if lowered in written:
            continue
        letters = re.sub(r"[\d-]", "", lowered)
        kin = [w for w in written if re.sub(r"[\d-]", "", w) == letters]  # the same name, any digits
        if not kin:
            continue
        other_digits = [w for w in kin if w.replace("-", "") != lowered.replace("-", "")]
        same_otherwise = len(other_digits) < len(kin)  # written with or without the hyphen
        if same_otherwise and not any(("-" in w) == ("-" in lowered) for w in other_digits):
            continue
        found.append((name, written[other_digits[0]]))
    return found


def _keys(text: str) -> list[str]:
    """Content words as comparison keys, in order: the light stemmer's output cut to five letters,
    so that "requires", "require" and "required" meet."""
    return [stem(word)[:5] for word in (w.lower() for w in WORD.findall(text)) if content_words(word)]


# A negation's scope ends at the end of its clause.
_CLAUSE_END = re.compile(r"[,;:.!?]\s")


def _negation_scopes(text: str) -> list[set[str]]:
    """For each negation cue, the keys of the next three content words of its clause (what is negated)."""
    return [set(negated) for _, negated in _negations(text)]


def _negations(text: str) -> list[tuple[set[str], list[str]]]:
    """For each negation cue, the keys of the last three content words of its clause before it (what it is said
    of: "Completed reduce tasks" of "... do not need to be re-executed") and of the next three, in order (what is
    negated)."""
    found = []
    for match in _NEGATION.finditer(text):
        following = text[match.end():match.end() + 80]
        end = _CLAUSE_END.search(following)
        before = text[max(0, match.start() - 80):match.start()]
        starts = [m.end() for m in _CLAUSE_END.finditer(before)]
        found.append((set(_keys(before[starts[-1] if starts else 0:])[-3:]),
                      _keys(following[:end.start()] if end else following)[:3]))
    return found


# Words between a negation and what it negates ("do not need to be re-executed", "is not always", "not
# significantly"): the negated verb is the next content word after them.
_LIGHT = frozenset({"need", "neces", "alway", "just", "only", "simpl", "signi", "subst", "likel", "able"})


def negation_clash(claim: str, window: str) -> bool:
    """A negation on one side, not matched by a negation of the same words on the other side, whose
    negated words the other side states ("cannot be applied" against "can be applied")."""
    claim_text = strip_markers(claim)
    claim_keys, window_keys = set(_keys(claim_text)), set(_keys(window))
    window_negations = _negations(window)
    claim_scopes, window_scopes = _negation_scopes(claim_text), [set(negated) for _, negated in window_negations]

    def unmatched(scopes: list[set[str]], others: list[set[str]]) -> list[set[str]]:
        return [scope for scope in scopes if scope and not any(scope & other for other in others)]

    if any(len(scope & window_keys) >= max(1, len(scope) - 1) for scope in unmatched(claim_scopes, window_scopes)):
        return True
    # A window's negation counts against the claim only when the claim states two or more of the
    # negated words: a claim shares one word with most negated clauses of a passage on its topic. Or the
    # negated verb alone, said of just what the claim names: every word, two or more, of the clause before
    # the cue ("Completed reduce tasks do not need to be re-executed" against "MapReduce re-executes
    # completed reduce tasks", but not against "... completed map tasks"; "ScienceParse and GROBID are not
    # optimized for processing ..." is no clash with "S2ORC processes PDFs with ScienceParse and GROBID").
    for subject, negated in window_negations:
        scope = set(negated)
        if not unmatched([scope], claim_scopes):
            continue
        head = next((key for key in negated if key not in _LIGHT), None)
        if (len(scope & claim_keys) >= max(2, len(scope) - 1)
                or (head in claim_keys and len(subject) >= 2 and subject <= claim_keys)):
            return True
    return False


def _directions(text: str) -> set[str]:
    signed = set()
    for word in WORD.findall(text.lower()):
        base = stem(word)
        base = _SYNONYMS.get(base, _SYNONYMS.get(word, base))
        group = _DIRECTION_GROUPS.get(base) or _DIRECTION_GROUPS.get(word)
        if group:
            signed.add(group)
    return signed


def _opposite(signed: str) -> str:
    """"+rate" <-> "-rate": the same quantity, the other direction."""
    return ("-" if signed[0] == "+" else "+") + signed[1:]


def both_directions(claim: str) -> bool:
    """Whether the claim says "higher" and "lower" of something ("fatality was higher ..., and the later
    lineages had lower rates"): a window's "lower" may then be about either clause."""
    signs = _directions(strip_markers(claim))
    return any(_opposite(signed) in signs for signed in signs)


def direction_clash(claim: str, window: str) -> bool:
    """The claim says "higher" where the window only says "lower" (about the same things)."""
    claim_dirs, window_dirs = _directions(strip_markers(claim)), _directions(window)
    return any(_opposite(signed) in window_dirs and signed not in window_dirs for signed in claim_dirs)


def _split_clause(claim: str) -> tuple[str, str] | None:
    """(main clause, added clause) when the claim adds a clause worth judging apart, else None."""
    for match in _CLAUSE.finditer(claim):
        head, tail = claim[:match.start()].strip(), claim[match.end():]
        if len(content_words(head)) >= 3 and len(content_words(tail)) >= 2:
            return head, tail
    return None


def main_clause(claim: str) -> str:
    """The claim up to an added clause (", which ...", "; ..."), or "" when it has none worth judging apart."""
    split = _split_clause(claim)
    return split[0] + "." if split else ""


def unstated_addition(claim: str, window: str) -> bool:
    """The claim adds a clause after its main one, and most of that clause's content words are not in
    the window (", which shows that it outperforms all prior work" on a window about something else)."""
    split = _split_clause(strip_markers(claim))
    if split is None:
        return False
    added = content_words(split[1])
    return len(added & content_words(window)) < ADDED_CLAUSE_COVERAGE * len(added)


# A list of three or more short items: "A, B, C(,) and/or D" (items of one to four words).
_ITEM = r"[^\W\d_][\w+\-/']*(?:\s+[\w+\-/']+){0,3}"
_LIST = re.compile(rf"(?P<items>{_ITEM}(?:,\s*{_ITEM}){{1,}},?\s+(?:and|or)\s+{_ITEM})", re.UNICODE)


def list_items(claim: str) -> list[str]:
    """The items of the first list of three or more in ``claim`` (empty when it has none)."""
    match = _LIST.search(strip_markers(claim))
    if match is None:
        return []
    parts = re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", match.group("items"))
    return [part.strip() for part in parts if part.strip()]


def unnamed_items(claim: str, window: str) -> list[str]:
    """Items of the claim's list with none of their content words in the window. The first item is
    left out: the list pattern cannot tell where it starts ("include fever" takes "include" along)."""
    items = list_items(claim)[1:]
    window_words = content_words(window)
    return [item for item in items if content_words(item) and not content_words(item) & window_words]


def check(claim: str, window: str) -> CheckResult | None:
    """The first disagreement between a claim and a window, or None when the checks find none."""
    missing = missing_numbers(claim, window)
    if missing:
        shown = ", ".join(missing[:3])
        return CheckResult("number", f"the passage does not give the number{'s' if len(missing) > 1 else ''} "
                                     f"{shown}", contradicts=False)
    misplaced = misplaced_numbers(claim, window)
    if misplaced:
        return CheckResult("number", f"the passage gives {', '.join(misplaced[:3])} for something else",
                           contradicts=False)
    renamed = other_numbered_names(claim, window)
    if renamed:
        name, other = renamed[0]
        return CheckResult("number", f"the passage names {other}, not {name}", contradicts=False)
    if negation_clash(claim, window):
        return CheckResult("negation", "the passage states it without the claim's negation (or the other way round)",
                           contradicts=True)
    if direction_clash(claim, window):
        return CheckResult("direction", "the passage gives the opposite direction (e.g. lower, not higher)",
                           contradicts=True)
    if unstated_addition(claim, window):
        return CheckResult("added", "the passage does not state what the claim adds after its first clause",
                           contradicts=False)
    unnamed = unnamed_items(claim, window)
    if unnamed:
        return CheckResult("list", f"the passage does not name {', '.join(unnamed[:3])}", contradicts=False)
    return None
