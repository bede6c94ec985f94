"""What a question asks for: its kind (a quantity, a choice, yes/no) and its key terms.

A sentence *answers* "how many loci are there?" when it carries a number, and "which gene ...?"
when it names something the question does not; topical similarity alone ranks a sentence that
restates the question above the one that answers it. Key terms are the question's content words;
a term the passages never use (a typo, "methylaton") is matched to the closest word they do use,
so a misspelt key term still counts where the paper spells it right.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum

from rapidfuzz import fuzz, process

from engine.cite.windows import content_words

_QUANTITY = re.compile(
    r"\b(how (many|much|long|often|large|small|big|far|fast|high|low)|what (percent|percentage|proportion|fraction|"
    r"share|number|size|range|concentration|rate|ratio|length|amount|level)|by what (factor|percent|amount)|"
    r"(which|what) (factor|percentage)|how much (more|less|tighter|higher|lower)|fold|percent(age)?|kcal|"
    r"what is the (size|number|range|percentage|proportion))\b", re.IGNORECASE)
_YES_NO = re.compile(r"^\s*(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|may|might)\b",
                     re.IGNORECASE)
_YES_NO_INSIDE = re.compile(r",\s*(is|are|do|does|did|can|has|have)\s+(it|they|there|this|these)\b", re.IGNORECASE)
_CHOICE = re.compile(r"\b(which|what|who|where)\b", re.IGNORECASE)
# A number that states a quantity: not a figure, table, panel or reference number, nor a year, nor the digits
# that end a name after a hyphen ("COVID-19", "SARS-CoV-2", "IL-6": every sentence on the pandemic is not a count).
_FIGURE_NUMBER = re.compile(r"\b(fig(ure)?s?|tables?|supplementary|panels?|refs?|eq(uation)?s?|sections?)\.?\s*"
                            r"S?\d+[A-Za-z]?", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(?<![^\W\d_]-)(?<![^\W\d_])[-−~≈]?\d[\d,]*(\.\d+)?"
                     r"\s*(%|-?fold|×|x\b|kcal|nm|µm|μm|mm|Å|kda|bp|kb|mb)?",
                     re.IGNORECASE)
_YEAR = re.compile(r"^(19|20)\d\d$")
# "how many genes show ...": the counted thing is the last word before the verb or preposition.
_HOW_MANY = re.compile(r"\bhow many\s+((?:[\w-]+\s+){0,5}?)([A-Za-z][\w-]*?)(?=\s+(?:are|is|were|was|do|does|did|"
                       r"have|has|had|can|could|show|shows|showed|exist|in|of|per|that|which|there|will|would|"
                       r"to|at|on|from|with|for|across|among|between)\b|\s*[?,.]|\s*$)", re.IGNORECASE)
# Units a question may ask a quantity in ("in kcal/mol", "what percentage").
_UNITS = {"kcal": r"kcal", "percent": r"%|percent", "fold": r"-?fold|×", "angstrom": r"Å|angstrom",
          "nm": r"nm\b", "bp": r"bp\b|base pairs", "kda": r"kda\b", "hours": r"h\b|hours?|hrs?\b",
          "days": r"days?\b", "minutes": r"min\b|minutes?"}
_UNIT_IN_QUESTION = {"kcal": r"kcal", "percent": r"percent|percentage|%", "fold": r"\bfold|by what factor",
                     "angstrom": r"Å|angstrom", "nm": r"\bnm\b|nanomet", "bp": r"\bbp\b|base pairs",
                     "kda": r"\bkda\b", "hours": r"\bhours\b", "days": r"\bdays\b", "minutes": r"\bminutes\b"}
_NAME = re.compile(r"\b[A-Za-z]*[A-Z][A-Za-z]*\d[\w+-]*|\b[A-Z]{2,}[\w+-]*|\b[A-Z][a-z]+\d\w*|\b\w+\d+[+-]")


class QuestionKind(StrEnum):
    QUANTITY = "quantity"  # how many / how much / what percentage / by what factor
    YES_NO = "yes/no"
    CHOICE = "choice"  # which / what / who: wants a name
    OPEN = "open"  # how / why / describe


@dataclass(frozen=True)
class Question:
    """The question as the answer scorer sees it."""

    text: str
    kind: QuestionKind
    terms: frozenset[str]  # stemmed content words
    names: frozenset[str] = field(default_factory=frozenset)  # gene/protein-like names it mentions, lower-cased
    # What a quantity is counted in: the noun of "how many genes" ("gene") and units the question
    # names ("kcal", "percent"); a sentence stating a number *of that* answers it.
    counted: str = ""
    units: frozenset[str] = field(default_factory=frozenset)


# Where one question asks a second thing: ", and what ...", "; how ...", "? Which ...", " and how is ...". A comma
# alone is not enough ("SARS-CoV-2, which causes COVID-19, was ..." is one question); after a bare "and" the
# question word is in lower case ("the ECDC and WHO" names two bodies) and soon followed by an auxiliary ("and how
# they drive evolution" is part of the first question, "and how is it related" a second one).
_WH = r"(?:how|what|which|why|when|where|who|whom|whose)"
_AUX = r"(?:is|are|was|were|do|does|did|can|could|has|have|will|would|should)"
_PREPOSITION_WH = r"(?:in|on|from|for|by|with|to|at|under|over)\s+(?:what|which|whom)"  # ", and on what data?"
_SECOND_ASK = re.compile(rf"(?:(?:,\s*and|;\s*(?:and)?)\s*(?=(?-i:{_WH}|{_AUX}|{_PREPOSITION_WH})\s)"
                         rf"|\?\s+(?=(?i:{_WH}|{_AUX}|{_PREPOSITION_WH})\s)"
                         rf"|\s+and\s+(?=(?-i:{_WH})(?:\s+[\w'-]+){{0,2}}\s+(?-i:{_AUX})\s))")
_ASKS_LIKE_A_QUESTION = re.compile(rf"^\s*(?:{_WH}|{_AUX}|{_PREPOSITION_WH}|describe|explain|name|list)\b",
                                   re.IGNORECASE)
# "On what data?" alone does not say what it asks about, and stays in the first ask; "What is S2ORC?" does.
MIN_ASK_WORDS = 3
MIN_ASK_WORDS_WITHOUT_AUXILIARY = 4
# Each ask gets its own quote in the answer's first section and its share of the sentences the reader reads; a
# pasted list of questions would leave each a sentence or two. Past this many, the rest is read as one last ask.
MAX_ASKS = 4


def asks(question: str) -> tuple[str, ...]:
    """The questions ``question`` asks, in order: "How is X trained, and what data does it learn from?" asks
    two. A researcher expects the answer to open with the first and then state the second; one sentence
    scored against the whole question is often one that half-answers the second part. Split only where each
    part reads as a question of its own ("the lag between when A changes and when B shows" stays one)."""
    text = " ".join(question.split())
    parts: list[str] = []
    rest = text
    while True:
        match = next((m for m in _SECOND_ASK.finditer(rest)
                      if _is_ask(rest[:m.start()]) and _is_ask(rest[m.end():])
                      and not re.search(r"\bbetween\b(?!.*\band\b)", rest[:m.start()], re.IGNORECASE)), None)
        if match is None:
            break
        parts.append(_as_question(rest[:match.start()]))
        rest = rest[match.end():]
    if not parts:
        return (text,)
    every = [*parts, _as_question(rest)]
    if len(every) > MAX_ASKS:
        every = [*every[:MAX_ASKS - 1], " ".join(every[MAX_ASKS - 1:])]
    return _named(tuple(every))


_PRONOUN = re.compile(r"\b(it|its)\b")  # "they" is as often the things the first ask is about as its name


def _named(parts: tuple[str, ...]) -> tuple[str, ...]:
    """Later asks with "it" given the name the first ask is about, when it names exactly one
    ("What is S2ORC, and how many papers does it contain?": the second ask is about S2ORC, and read alone
    "how many papers does it contain?" was best answered by a sentence on PubMed's size)."""
    names = list(dict.fromkeys(m.group() for m in _NAME.finditer(parts[0])))
    if len(names) != 1:
        return parts
    name = names[0]
    return (parts[0], *(_PRONOUN.sub(lambda m: f"{name}'s" if m.group(1) == "its" else name, part)
                        for part in parts[1:]))


def _is_ask(part: str) -> bool:
    words = part.split()
    enough = len(words) >= MIN_ASK_WORDS_WITHOUT_AUXILIARY or (
        len(words) >= MIN_ASK_WORDS and any(re.fullmatch(_AUX, w, re.IGNORECASE) for w in words))
    return enough and bool(_ASKS_LIKE_A_QUESTION.match(part))


def _as_question(part: str) -> str:
    part = part.strip(" ,;")
    part = part[0].upper() + part[1:]
    return part if part.endswith("?") else part.rstrip(".") + "?"


def analyse(question: str) -> Question:
    """Kind, key terms and names of ``question``."""
    if _QUANTITY.search(question):
        kind = QuestionKind.QUANTITY
    elif _YES_NO.match(question) or _YES_NO_INSIDE.search(question):
        kind = QuestionKind.YES_NO
    elif _CHOICE.search(question):
        kind = QuestionKind.CHOICE
    else:
        kind = QuestionKind.OPEN
    names = frozenset(m.group().lower() for m in _NAME.finditer(question))
    counted, units = "", frozenset[str]()
    if kind == QuestionKind.QUANTITY:
        many = _HOW_MANY.search(question)
        counted = _stem(many.group(2)) if many else ""
        units = frozenset(u for u, pattern in _UNIT_IN_QUESTION.items() if re.search(pattern, question, re.IGNORECASE))
    return Question(question, kind, frozenset(content_words(question)), names, counted, units)


# A question about the questions a paper asks ("Which research questions does LongEval address?") is answered by
# sentences that are questions themselves; any other question is not: "RQ1: Does inter-annotator agreement improve
# using fine-grained annotations?" names the topic of "What agreement does fine-grained evaluation reach?" and
# states nothing.
_ABOUT_QUESTIONS = re.compile(r"\b(questions?|RQs?\d*|ask(s|ed|ing)?|hypothes[ie]s|wonder(s|ed)?)\b", re.IGNORECASE)


def asks_about_questions(question: str) -> bool:
    """Whether ``question`` asks about questions (research questions, what a study asks, its hypotheses)."""
    return bool(_ABOUT_QUESTIONS.search(question))


def is_question(sentence: str) -> bool:
    """Whether ``sentence`` is itself a question: it ends with a question mark (closing quotes aside), and what
    stands before a colon, if one does, is only a label ("RQ1:", "3.1 Q2:"). "In this paper, we study the
    detection problem: given a text, can we determine if the model was trained on it?" states the problem a
    paper studies, which is an answer to "How can pretraining data be detected?"."""
    text = sentence.strip()
    if not text.rstrip("\"'”’)]").endswith("?"):
        return False
    lead, colon, _ = text.partition(":")
    return not colon or len(lead.split()) <= 3


def _stem(word: str) -> str:
    """A crude stem for matching "genes" with "gene": no plural s, the first five letters."""
    word = word.lower()
    return (word[:-1] if word.endswith("s") and len(word) > 3 else word)[:5]


def states_counted(text: str, question: Question) -> bool:
    """``text`` gives a number of what the question counts ("5,765 genes") or in its unit ("0.9 kcal/mol")."""
    masked = _FIGURE_NUMBER.sub(" ", text)
    for match in _NUMBER.finditer(masked):
        after = masked[match.end():match.end() + 40]
        # "5,765 genes", "12,309 mandarin-specific ILs": within three words, in the same clause.
        following = re.findall(r"[A-Za-z][\w-]*", re.split(r"[(),;:.\[\]]", after, maxsplit=1)[0])[:3]
        if question.counted and any(_stem(w) == question.counted for w in following):
            return True
        unit = match.group(0) + after[:12]
        if any(re.search(_UNITS[u], unit, re.IGNORECASE) for u in question.units):
            return True
    return False


def with_typos_matched(question: Question, vocabulary: Iterable[str]) -> Question:
    """Key terms the passages never use replaced by the closest word they do use (edit-distance ratio >= 80)."""
    words = set(vocabulary)
    missing = [t for t in question.terms if t not in words and len(t) >= 5 and not any(c.isdigit() for c in t)]
    if not missing or not words:
        return question
    choices = sorted(words)
    terms = set(question.terms)
    for term in missing:
        found = process.extractOne(term, choices, scorer=fuzz.ratio, score_cutoff=80)
        if found is not None:
            terms.discard(term)
            terms.add(found[0])
    return replace(question, terms=frozenset(terms))  # kind, names, counted and units kept


def quantities(text: str) -> list[str]:
    """The numbers in ``text`` that state a quantity (figure/table/reference numbers and years left out)."""
    masked = _FIGURE_NUMBER.sub(" ", text)
    found = []
    for match in _NUMBER.finditer(masked):
        number = match.group().strip()
        digits = re.sub(r"[^\d]", "", number.split()[0])
        if _YEAR.match(digits) and not match.group(2):
            continue
        found.append(number)
    return found


def new_names(text: str, question: Question) -> list[str]:
    """Gene/protein/strain-like names in ``text`` that the question does not already mention."""
    return [m.group() for m in _NAME.finditer(text) if m.group().lower() not in question.names]
