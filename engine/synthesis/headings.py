"""Which of the model's headings may stand as headings.

A heading is shown as a section's name and is never checked against the sources, so it must state
nothing: "How SPECTER is trained" or "Training data" may stand; "The number of papers in S2ORC is
81.1 million." states a claim, and "For how many is full text available, the evidence states that
…" is a sentence the model put after "##". Such a heading comes back as a sentence of its section,
verified like any other. A heading that repeats words of the evidence is the evidence, not a name
for a section: a statement goes the same way, and a phrase that states nothing ("Current Practices in
Long-Form Summarization Evaluation", a section title of the paper) is dropped, since as a sentence it
would be a fragment that a citation seems to back. Citation markers in a heading cite nothing ("Evidence [7]",
when only [1] is listed); they are removed, and a heading that then only names the evidence or a
source is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine.cite.markers import strip_markers
from engine.text.tokens import WORD

MAX_HEADING_WORDS = 8  # a section's name; longer is a sentence
COPIED_WORDS = 4  # this many words in a row from a quote make a heading copied evidence
# Headings that name the prompt's parts rather than a topic ("Evidence", "Source 2", "Answer").
_GENERIC = re.compile(r"^(the\s+)?(evidence|sources?|passages?|quotes?|references?|citations?|papers?|answer|"
                      r"direct answer|summary|details|conclusion)(\s+\d+)?$", re.IGNORECASE)
# Verbs that make a title a statement ("S2ORC is", "the model uses", "it improves").
_STATING = re.compile(r"\b(is|are|was|were|has|have|had|does|did|can|could|will|would|shows?|showed|uses|used|"
                      r"contains?|includes?|improves?|outperforms?|achieves?|reaches|provides?|consists|states?|"
                      r"says|found|finds|reports?|requires?|means)\b", re.IGNORECASE)
_QUESTION_WORD = re.compile(r"^(how|what|which|why|when|where|who|whom|whose|is|are|does|do|can)\b", re.IGNORECASE)


def _words(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(text)]


def copied(title: str, evidence: Sequence[str]) -> bool:
    """Whether ``title`` repeats ``COPIED_WORDS`` or more words in a row of one of the quotes."""
    words = _words(title)
    if len(words) < COPIED_WORDS:
        return False
    runs = {" ".join(words[i:i + COPIED_WORDS]) for i in range(len(words) - COPIED_WORDS + 1)}
    return any(run in " ".join(_words(quote)) for quote in evidence for run in runs)


def states_claim(title: str) -> bool:
    """Whether ``title`` is a statement rather than a section's name: a full stop, a number, a verb of
    saying or being, a colon with more after it, a quotation, or too many words. A short question
    ("How is SPECTER trained?") names what its section answers, so it stands."""
    words = title.split()
    if len(words) > MAX_HEADING_WORDS:
        return True
    if title.endswith("?") and _QUESTION_WORD.match(title):
        return False
    return (title.endswith(".") or bool(re.search(r"\d", title)) or bool(_STATING.search(title))
            or bool(re.search(r":\s*\S", title)) or any(mark in title for mark in "\"“”"))


def section_heading(title: str, evidence: Sequence[str] = ()) -> tuple[str, str]:
    """(heading, sentence) for a heading the model wrote: a section's name stays the heading (markers
    removed); a statement becomes the section's first sentence with no heading; a heading that only names
    the evidence ("Evidence [7]") or copies a phrase of it is dropped (("", ""))."""
    text = " ".join(strip_markers(title).split()).strip(" :-–—*#")
    if not text or _GENERIC.match(text):
        return "", ""
    claim = states_claim(text)
    if copied(text, evidence) and not claim:
        return "", ""
    if claim:
        # The markers stay on the sentence: verification checks what they cite.
        sentence = " ".join(title.split()).strip(" :-–—*#")
        return "", sentence if strip_markers(sentence).rstrip().endswith((".", "?", "!")) else sentence + "."
    return text, ""
