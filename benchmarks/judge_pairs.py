"""Claim–evidence pairs for training and testing the support judge, built from real text.

FactCC-style: a sentence of a real passage against a window of that passage (the sentence and its
neighbours) is ``supports``; the same sentence with "not" inserted, a number changed or a direction
word flipped is ``refutes``; with a clause from another paper appended, an entity swapped for one
from another paper, or a sentence from elsewhere is ``neutral``. The perturbation functions are
shared by the training script (on the sample datastore) and the benchmark (on the corpus PDFs, which
the judge never sees in training).

Labels: 0 supports, 1 refutes, 2 neutral (the judge's three outputs).
"""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.cite.sentences import split_sentences
from engine.cite.windows import prose_like

SUPPORTS, REFUTES, NEUTRAL = 0, 1, 2
LABELS = ("supports", "refutes", "neutral")


@dataclass(frozen=True)
class Pair:
    claim: str
    evidence: str
    label: int
    # "true", "negation", "number", "direction", "entity", "word", "appended", "other", "same-paper"; the
    # "evidence-" kinds (EVIDENCE_SIDE_KINDS) change the evidence's sentence and leave the claim as written.
    kind: str


# The evidence-side counterpart of the claim-side kinds: the claim is the paper's own sentence and the
# window around it says otherwise (negated, another number, the opposite direction: refutes) or speaks of
# another entity (neutral). A judge that reads only how much the two share cannot tell these apart.
EVIDENCE_SIDE_KINDS = ("true", "evidence-negation", "evidence-number", "evidence-direction", "evidence-entity")


_AUX = re.compile(r"\b(is|are|was|were|can|could|does|do|did|has|have|had|will|would|should|may|might|must)\b"
                  r"(?!\s+(?:not|n't|no|never)\b)", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)(\s?%|\s?(?:percent|points|ms|s|x|times|GB|MB|M|K|k|B)\b)?"
                     r"(?!\w)(?!\.\d)")
_DIRECTIONS = {
    "increase": "decrease", "increases": "decreases", "increased": "decreased", "increasing": "decreasing",
    "higher": "lower", "more": "fewer", "better": "worse", "best": "worst", "improves": "degrades",
    "improve": "degrade", "improved": "degraded", "improvement": "degradation", "outperforms": "underperforms",
    "outperform": "underperform", "larger": "smaller", "faster": "slower", "above": "below",
    "positive": "negative", "maximize": "minimize", "reduces": "increases", "reduce": "increase",
    "reduced": "increased", "gain": "loss", "gains": "losses", "high": "low", "large": "small",
    "effective": "ineffective", "significantly": "insignificantly", "easier": "harder", "stable": "unstable",
    "consistent": "inconsistent", "superior": "inferior", "robust": "fragile", "efficient": "inefficient",
    "enhances": "impairs", "boosts": "hurts", "lowers": "raises", "accurate": "inaccurate",
}
_DIRECTIONS.update({v: k for k, v in list(_DIRECTIONS.items()) if v not in _DIRECTIONS})
_DIRECTION_WORDS_SET = frozenset(_DIRECTIONS)
_DIRECTION_WORD = re.compile(r"\b(" + "|".join(sorted(_DIRECTIONS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_ENTITY = re.compile(r"\b([A-Z][A-Za-z]*[A-Z0-9][A-Za-z0-9\-]*|[A-Z]{2,}[a-z]*\d*)\b")
_CONNECTIVES = (", which", ", and", ", while", "; moreover,", ", and it", ", so")


def negate(sentence: str) -> str | None:
    """Insert "not" after the first auxiliary verb ("is" -> "is not"); None when there is none."""
    match = _AUX.search(sentence)
    if match is None:
        return None
    return sentence[:match.end()] + " not" + sentence[match.end():]


def change_number(sentence: str, rng: random.Random, references: bool = True) -> str | None:
    """Change one number of the sentence (keeping its format and unit); None when it has none.
    ``references=False`` leaves numbers that only point elsewhere alone (a citation marker "[4]",
    "Figure 2", "Table 3"): changing those does not make a false claim about the findings."""
    candidates = [m for m in _NUMBER.finditer(sentence) if not _looks_like_year(m.group(1))
                  and (references or not _is_reference_number(sentence, m.start(1), m.end(1)))]
    if not candidates:
        return None
    match = rng.choice(candidates)
    number = match.group(1)
    decimals = len(number.split(".")[1]) if "." in number else 0
    value = float(number.replace(",", "")) if "," in number and "." not in number else float(number.replace(",", "."))
    for _ in range(10):
        factor = rng.choice((0.5, 0.7, 0.8, 1.25, 1.5, 2.0, 3.0))
        new = value * factor + rng.choice((0, 1, -1)) * (10 ** -decimals)
        text = f"{new:.{decimals}f}" if decimals else str(max(0, round(new)))
        if text != number and text.lstrip("-"):
            return sentence[:match.start(1)] + text + sentence[match.end(1):]
    return None


def flip_direction(sentence: str, rng: random.Random) -> str | None:
    """Replace one direction word by its opposite (increase -> decrease); None when there is none."""
    matches = list(_DIRECTION_WORD.finditer(sentence))
    if not matches:
        return None
    match = rng.choice(matches)
    word = match.group(1)
    opposite = _DIRECTIONS[word.lower()]
    if word[0].isupper():
        opposite = opposite[0].upper() + opposite[1:]
    return sentence[:match.start(1)] + opposite + sentence[match.end(1):]


def swap_entity(sentence: str, other_entities: list[str], rng: random.Random) -> str | None:
    """Swap a named entity (model, data set, acronym) for one from another paper."""
    matches = [m for m in _ENTITY.finditer(sentence) if m.start() > 0]
    choices = [e for e in other_entities if e not in sentence]
    if not matches or not choices:
        return None
    match = rng.choice(matches)
    return sentence[:match.start()] + rng.choice(choices) + sentence[match.end():]


_CONTENT_WORD = re.compile(r"\b[a-z]{6,}\b")


def swap_content_word(sentence: str, other_words: list[str], rng: random.Random) -> str | None:
    """One content word (six letters or more, lower case) swapped for a word of another paper: the
    sentence keeps nearly all its words and loses what it said ("matrix inversion" -> "matrix deprecation")."""
    matches = [m for m in _CONTENT_WORD.finditer(sentence) if m.group(0) not in _DIRECTION_WORDS_SET]
    choices = [w for w in other_words if w not in sentence]
    if not matches or not choices:
        return None
    match = rng.choice(matches)
    return sentence[:match.start()] + rng.choice(choices) + sentence[match.end():]


def append_clause(sentence: str, other_sentence: str, rng: random.Random) -> str:
    """The sentence with a clause from elsewhere appended ("..., which shows that ...")."""
    body = sentence.rstrip().rstrip(".")
    other = other_sentence.strip().rstrip(".")
    other = other[0].lower() + other[1:] if other[:2] != other[:2].upper() else other
    return f"{body}{rng.choice(_CONNECTIVES)} {other}."


_POINTER = re.compile(r"(?:\b(?:fig|figs|figure|figures|table|tables|eq|eqs|equation|section|sec|appendix|"
                      r"chapter|ref|refs|step|line|lines|page|pages|p|pp)\.?\s*(?:\d+[a-z]?\s*(?:,|and|–|-)\s*)*)$",
                      re.IGNORECASE)


def _is_reference_number(sentence: str, start: int, end: int) -> bool:
    """The number at [start, end) is inside a citation marker ("[4]", "[2, 5]") or names a figure,
    table, equation or section ("Figure 2", "Tables 1 and 3")."""
    opening, closing = sentence.rfind("[", 0, start), sentence.find("]", end)
    if opening != -1 and closing != -1 and re.fullmatch(r"[\d\s,–-]*", sentence[opening + 1:closing]):
        return True
    return bool(_POINTER.search(sentence[max(0, start - 40):start]))


def _looks_like_year(number: str) -> bool:
    return number.isdigit() and len(number) == 4 and 1900 <= int(number) <= 2030


def documents_sentences(texts: list[str]) -> list[list[str]]:
    """Prose sentences (40–300 characters) of each text, in order."""
    result = []
    for text in texts:
        sentences = [" ".join(s.split()) for s in split_sentences(text)]
        result.append([s for s in sentences if 40 <= len(s) <= 300 and prose_like(s)])
    return result


def datastore_texts(path: Path, limit: int | None = None) -> Iterator[tuple[str, str]]:
    """(id, text) of the peS2o-style JSON lines records (title + text)."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for index, line in enumerate(lines):
            if limit is not None and index >= limit:
                return
            record = json.loads(line)
            yield str(record["id"]), str(record.get("text") or "")


def make_pairs(docs: list[list[str]], rng: random.Random, per_doc: int = 4,
               kinds: tuple[str, ...] = ("true", "negation", "number", "direction", "entity", "appended",
                                          "other", "same-paper"), references: bool = True) -> list[Pair]:
    """Perturbation pairs from each document's sentences: a window around a sentence is the evidence.
    ``references=False``: a changed number is never a citation marker or a figure or table number."""
    entities = sorted({m.group(1) for sentences in docs for s in sentences for m in _ENTITY.finditer(s)})
    words = sorted({m.group(0) for sentences in docs for s in sentences for m in _CONTENT_WORD.finditer(s)}) \
        if "word" in kinds else []
    pairs: list[Pair] = []
    usable = [i for i, sentences in enumerate(docs) if len(sentences) >= 3]
    for doc_index in usable:
        sentences = docs[doc_index]
        for _ in range(per_doc):
            kind = rng.choice(kinds)
            for _attempt in range(8):  # not every sentence has a number or a direction word
                position = rng.randrange(len(sentences))
                before, after = rng.choice(((0, 0), (1, 0), (0, 1), (1, 1)))
                window = " ".join(sentences[max(0, position - before): position + after + 1])
                other_doc = docs[rng.choice([i for i in usable if i != doc_index] or usable)]
                if kind.startswith("evidence-"):
                    pair = _evidence_changed(kind, sentences, position, before, after, entities, rng, references)
                else:
                    pair = _perturbed(kind, sentences[position], window, sentences, position, other_doc,
                                      entities, rng, references, words)
                if pair is not None:
                    pairs.append(pair)
                    break
    return pairs


def _perturbed(kind: str, sentence: str, window: str, sentences: list[str], position: int, other_doc: list[str],
               entities: list[str], rng: random.Random, references: bool = True,
               words: list[str] | None = None) -> Pair | None:
    if kind == "true":
        claim = sentence
        if rng.random() < 0.3 and ", " in sentence[30:]:  # the first part of a sentence is supported too
            cut = sentence.index(", ", 30)
            claim = sentence[:cut].rstrip() + "."
        return Pair(claim, window, SUPPORTS, kind)
    if kind == "negation":
        claim = negate(sentence)
        return None if claim is None else Pair(claim, window, REFUTES, kind)
    if kind == "number":
        claim = change_number(sentence, rng, references)
        return None if claim is None else Pair(claim, window, REFUTES, kind)
    if kind == "direction":
        claim = flip_direction(sentence, rng)
        return None if claim is None else Pair(claim, window, REFUTES, kind)
    if kind == "entity":
        claim = swap_entity(sentence, entities, rng)
        return None if claim is None else Pair(claim, window, NEUTRAL, kind)
    if kind == "word":
        claim = swap_content_word(sentence, words or [], rng)
        return None if claim is None else Pair(claim, window, NEUTRAL, kind)
    if kind == "appended":
        return Pair(append_clause(sentence, rng.choice(other_doc), rng), window, NEUTRAL, kind)
    if kind == "other":
        return Pair(rng.choice(other_doc), window, NEUTRAL, kind)
    if kind == "same-paper":  # a sentence of the same paper, far from the window
        far = [s for i, s in enumerate(sentences) if abs(i - position) > 4]
        return Pair(rng.choice(far), window, NEUTRAL, kind) if far else None
    raise ValueError(kind)


def _evidence_changed(kind: str, sentences: list[str], position: int, before: int, after: int,
                      entities: list[str], rng: random.Random, references: bool) -> Pair | None:
    """The sentence as the claim against its window with that sentence changed."""
    sentence = sentences[position]
    if kind == "evidence-negation":
        changed, label = negate(sentence), REFUTES
    elif kind == "evidence-number":
        changed, label = change_number(sentence, rng, references), REFUTES
    elif kind == "evidence-direction":
        changed, label = flip_direction(sentence, rng), REFUTES
    elif kind == "evidence-entity":
        changed, label = swap_entity(sentence, entities, rng), NEUTRAL
    else:
        raise ValueError(kind)
    if changed is None or changed == sentence:
        return None
    window = " ".join([*sentences[max(0, position - before):position], changed,
                       *sentences[position + 1:position + after + 1]])
    return Pair(sentence, window, label, kind)


def climate_fever_pairs(path: Path) -> list[tuple[str, Pair]]:
    """(claim id, pair) for every CLIMATE-FEVER claim–evidence pair."""
    mapping = {"SUPPORTS": SUPPORTS, "REFUTES": REFUTES, "NOT_ENOUGH_INFO": NEUTRAL}
    result = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for evidence in record["evidences"]:
            result.append((str(record["claim_id"]), Pair(record["claim"], evidence["evidence"],
                                                         mapping[evidence["evidence_label"]], "climate-fever")))
    return result
