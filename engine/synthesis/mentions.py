"""Whether the passages found mention what the question names.

A question about "ReVerb", "Csx23" or "HEK293T" names something authors spell one way. When no passage found
mentions any of the names a question gives, no passage can state its answer: quoting the closest passage first
would put a sentence about something else where the researcher reads the answer. Ordinary words never count
(every library mentions "virus"); only names: a word with two capitals or more in one of its hyphen-joined parts
(SPECTER, ReVerb, DNA-PKcs, but not a title's "Cavity-Based"), a capital after a small letter (katE) or letters
and digits together (S2ORC, E251Q).

A question asking how or why something of several ordinary words does what it does ("How do graph attention
networks weight a node's neighbours?") names that thing too: it counts as mentioned where one passage holds all
its content words. A question asking what something is ("What is the boiling point of liquid nitrogen at sea
level?") names it in its remaining words: it counts as mentioned where one passage read holds half of their
content words (a passage that answers often words it otherwise; benchmarks/what_questions.py chose the half on
COVID-QA's training questions, where every answerable one reached 0.62, and it silenced none of the check
questions while telling 32 of 75 asked of a library without their papers).

The rule fires only when *every* name is missing, each missing one probed with a search for the name alone (the
question's own search may rank a passage that mentions it below the ones it reads), so a question that names one
thing the library holds is never silenced. Matching ignores case, spaces and hyphens ("HEK 293T", "SciB-ERT"
split by a line break) and a plural "s" (LLMs).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from engine.cite.windows import content_words
from engine.synthesis.noun_phrase import subject_phrase
from engine.text.names import mentioned, names, squeezed, squeezed_in

PROBE_PASSAGES = 10  # passages read when a name is searched for alone
# A question giving more names than this is not asking about one named thing, and each missing name costs a
# search: the rule is not applied (the most any LitQA2 dev, COVID-QA check or ScholarQA-Multi question gives is 5).
MAX_NAMES = 6
# "What is", "What were": what the question asks about follows.
_WHAT_IS = re.compile(r"^\s*what\s+(?:is|are|was|were)\s+", re.IGNORECASE)
THING_SHARE = 0.5  # of the asked thing's content words, held by one passage, for it to count as mentioned
THING_WORDS = 3  # a thing of fewer content words ("the results") asks too little to be tested
# "How do", "Why does", "What can": the subject of such a question follows, then its verb.
_ASKING = re.compile(r"^\s*(?:how|why|what|when|where|in what way)\s+(?:do|does|did|is|are|was|were|can|could|"
                     r"would|should|will|might|may)\s+", re.IGNORECASE)


def asked_phrase(question: str) -> str:
    """The thing of several words a "How do/What does/Why is ... verb" question asks about, its subject
    ("How do graph attention networks weight a node's neighbours?" -> "graph attention networks"), or ``""``:
    a term in ordinary words that no name rule sees, yet which a passage must mention to answer."""
    opening = _ASKING.match(question)
    if not opening:
        return ""
    phrase = subject_phrase(question[opening.end():].rstrip(" ?"))
    return phrase if len(phrase.split()) >= 2 and not names(phrase) else ""


def asked_thing(question: str) -> str:
    """What a "What is/are/was/were ..." question without names asks about: its words after the verb
    ("the boiling point of liquid nitrogen at sea level"), or ``""`` (another form, a name, too few words)."""
    opening = _WHAT_IS.match(question)
    if not opening or names(question):
        return ""
    thing = " ".join(question[opening.end():].split()).rstrip(" ?")
    return thing if len(content_words(thing)) >= THING_WORDS else ""


def holds_words(phrase: str, texts: Iterable[str], share: float = 1.0) -> bool:
    """Whether one of ``texts`` holds ``share`` of the content words of ``phrase`` (in any form: "network",
    "networks"); all of them by default."""
    wanted = content_words(phrase)
    return any(len(wanted & content_words(text)) >= share * len(wanted) for text in texts)


def unmentioned_names(question: str, texts: Sequence[str], probe: Callable[[str], Sequence[str]]) -> list[str]:
    """Every name of ``question`` (and the several-word subject it asks about, ``asked_phrase``) when none is
    mentioned in ``texts`` (the passages found) nor in what ``probe(name)`` returns (the texts of a search for
    the name alone); else, or with nothing named, []. The passages and probes are those of the scope asked
    in: a question narrowed to the library is told that nothing there mentions what it asks about."""
    thing = asked_thing(question)
    if thing:  # "What is ..." with no names
        held = holds_words(thing, texts, THING_SHARE) or holds_words(thing, probe(thing), THING_SHARE)
        return [] if held else [thing]
    asked = names(question)
    phrase = asked_phrase(question)
    if (not asked and not phrase) or len(asked) > MAX_NAMES:
        return []
    found = [squeezed(text) for text in texts]  # once, not once a name
    if any(squeezed_in(name, found) for name in asked) or (phrase and holds_words(phrase, texts)):
        return []
    if any(mentioned(name, probe(name)) for name in asked) or (phrase and holds_words(phrase, probe(phrase))):
        return []
    return [*asked, phrase] if phrase else asked


def not_mentioned_lead(missing: Sequence[str]) -> str:
    """The plain statement a digest opens with when no passage found mentions what the question names."""
    quoted = [f"“{name}”" for name in missing]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return (f"{NOT_MENTIONED} {listed}, which the question asks about, so none can state the answer. "
            "The passages closest to it follow; check the spelling, or add papers that study it.")


NOT_MENTIONED = "No passage found mentions"
