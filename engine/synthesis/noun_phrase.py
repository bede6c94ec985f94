"""The noun phrase a sentence is about: the words before its first verb, when they name something.

A digest's theme heading is taken from a quote, and the opening words of a sentence are no heading: "This has
several desirable implications" or "We also experimented with other distance functions" name nothing a reader
could scan for. What names the theme is the sentence's subject when it is a noun phrase of its own ("The
literature graph has 12M nodes" -> "Literature graph", "SPECTER outperforms all baselines" -> "SPECTER"); a
pronoun, a phrase that points back ("Our approach", "This model"), an opening adverbial ("In figure 3 it"), a
lone generic noun ("Results") or a subject cut mid-phrase ("The number of") is none.

No tagger is needed for this much: the first verb is found from the auxiliaries and modals, a list of the verbs
papers state results with (in their -s and -ed forms too), and any other -ed word not right after a determiner
("the proposed method" keeps "proposed").
"""

from __future__ import annotations

import re

_AUXILIARIES = frozenset("is are was were be been being am has have had do does did can could may might will would "
                         "shall should must".split())
# Verbs of papers' sentences, in their base form; "-s" and "-ed" forms are derived below.
_VERBS = frozenset("""
    achieve adopt aggregate allow apply appear assign assume attend build capture cause combine compare compute
    consider consist contain create decrease define demonstrate depend describe differ employ enable encode
    ensure estimate exceed exploit explain extract find focus follow generate give handle help identify improve
    include incorporate increase indicate induce introduce involve lead learn leverage lie make map measure need
    obtain occur operate outperform perform predict present process produce propose provide rank reach receive
    reduce reflect rely remain report represent require result return reveal run see seem select share show solve
    store suggest support take tend train treat update use vary weight work yield
""".split())
_IRREGULAR = frozenset("found made led gave took showed shown saw seen ran lay grew grows became becomes".split())
_DETERMINERS = frozenset("the a an".split())
# Words that open a phrase pointing back to something said before: such a subject names nothing on its own.
_POINTING = frozenset("we i you they it he she this that these those there here our their its his her my your one "
                      "such each both all some most many several which what who another other either neither".split())
# A subject that is only one of these says nothing about the theme.
_GENERIC = frozenset("method methods approach approaches model models result results paper papers work system "
                     "systems study studies data analysis experiment experiments table figure section value values "
                     "example examples number task tasks".split())
# A subject ending on one of these was cut mid-phrase ("The number of", "Models trained with").
_OPEN_ENDED = frozenset("of in on at to for with by from and or but nor as that which whose than via into within "
                        "between using".split())
# A subject opening with one of these is an adverbial the clause began with ("In figure 3 it can be seen").
_PREPOSITIONS = frozenset("in on at for with by from to into within between after before during under over "
                          "since unlike like as through across".split())
# A personal pronoun inside a subject means the phrase ran on past where the subject began.
_PERSONAL = frozenset("i we you he she it they".split())
MAX_PHRASE_WORDS = 6
_WORD_EDGES = re.compile(r"^[\"'“‘(]+|[\"'”’),.;:]+$")


def _verb_forms() -> frozenset[str]:
    forms = set(_AUXILIARIES) | set(_IRREGULAR)
    for verb in _VERBS:
        forms.add(verb)
        forms.add(verb[:-1] + "ies" if verb.endswith("y") and verb[-2] not in "aeiou" else
                  verb + "es" if verb.endswith(("s", "sh", "ch", "x")) else verb + "s")
        forms.add(verb + "d" if verb.endswith("e") else verb + "ed")
    return frozenset(forms)


_VERB_FORMS = _verb_forms()


def _is_verb(word: str, before: str) -> bool:
    """Whether ``word`` (lower-cased) is a verb where it stands; ``before`` is the word before it."""
    after_determiner = before in _DETERMINERS or before in _POINTING
    if word in _AUXILIARIES or word in _IRREGULAR:
        return True
    if word in _VERB_FORMS:
        return not after_determiner  # "the use of", "the results": nouns
    return word.endswith("ed") and len(word) > 4 and not after_determiner and bool(before)


def subject_phrase(clause: str) -> str:
    """The noun phrase ``clause`` opens with, before its first verb, leading articles dropped; ``""`` when
    the clause opens with a pronoun or a phrase pointing back, has no verb to end its subject, or its
    subject is too long, generic or cut mid-phrase."""
    words = [_WORD_EDGES.sub("", w) for w in clause.split()]
    words = [w for w in words if w]
    lowered = [w.lower() for w in words]
    end = next((i for i, w in enumerate(lowered) if _is_verb(w, lowered[i - 1] if i else "")), None)
    if not end:  # no verb, or the clause opens with one
        return ""
    subject, lowered_subject = words[:end], lowered[:end]
    while subject and lowered_subject[0] in _DETERMINERS:
        subject, lowered_subject = subject[1:], lowered_subject[1:]
    if not subject or len(subject) > MAX_PHRASE_WORDS or lowered_subject[0] in _POINTING:
        return ""
    if lowered_subject[0] in _PREPOSITIONS or _PERSONAL & set(lowered_subject):
        return ""
    if lowered_subject[-1] in _OPEN_ENDED or (len(subject) == 1 and lowered_subject[0] in _GENERIC):
        return ""
    if not any(ch.isalpha() for ch in "".join(subject)):
        return ""
    return " ".join(subject)
