"""A paper's name for its own system, and its sentences read with that name in place of "our model".

A methods paper names its system in its title ("SPECTER: Document-level Representation Learning ...",
"S2ORC: The Semantic Scholar Open Research Corpus") and then mostly calls it "our model" or "our
corpus". A researcher asks by the name ("How is SPECTER trained?"), so the sentence that answers
("To train our model, we use a subset of the Semantic Scholar corpus ...") shares nothing with the
question that says it is about SPECTER, and the answer reader, which has never seen the title, ranks it
below sentences that name SPECTER in passing. Reading the sentence as "To train SPECTER, we use ..."
is the coreference a reader of the paper makes; it changes only what the reader and the hand score
read, never the quote shown.
"""

from __future__ import annotations

import re

# The title's name: one word before a colon that is written as a name, not a word of a sentence: capitals
# inside it (SPECTER, S2ORC, PaperMage, MapReduce), a digit, or a hyphen (Multi-LexSum, Slide-seq).
# "Review: ...", "Beyond Summarization: ..." and "COVID-19 and ...: ..." are not read as names; a disease
# or virus named this way ("COVID-19: a review") is left out by the list below.
_TITLE_NAME = re.compile(r"\s*([A-Za-z][A-Za-z0-9]*(?:[-+][A-Za-z0-9]+)*)\s*:\s+\S")
_NOT_A_SYSTEM = re.compile(r"^(?:COVID-19|SARS-CoV-2|SARS-CoV|MERS-CoV|HIV-1|HIV-2|H1N1|H5N1|H7N9|2019-nCoV|nCoV-2019)$",
                           re.IGNORECASE)
# How a paper refers to its own system when it does not use the name.
_SELF_REFERENCE = re.compile(
    r"\b(?:our|the proposed)\s+(?:proposed\s+)?(?:model|method|approach|system|framework|algorithm|architecture|"
    r"network|tool|toolkit|library|corpus|dataset|benchmark|pipeline|technique|technology)\b(?!-)",
    re.IGNORECASE)


def system_name(title: str | None) -> str | None:
    """The name a paper's title gives its system ("SPECTER" of "SPECTER: Document-level ..."), or None."""
    match = _TITLE_NAME.match(title or "")
    if match is None:
        return None
    name = match.group(1)
    written_as_name = any(c.isupper() for c in name[1:]) or any(c.isdigit() for c in name) or "-" in name
    return name if written_as_name and len(name) >= 3 and not _NOT_A_SYSTEM.match(name) else None


def asks_about(question: str, name: str | None) -> bool:
    """Whether the question names the system (as a word, any case: "specter" asks about SPECTER)."""
    return bool(name) and re.search(rf"(?<![\w-]){re.escape(name or '')}(?![\w-])", question, re.IGNORECASE) is not None


def named(text: str, name: str) -> str:
    """``text`` with the paper's references to its own system written as its name."""
    return _SELF_REFERENCE.sub(name, text)


def as_read_for(question: str, title: str | None, text: str) -> str:
    """``text`` as the answer reader reads it for ``question``: named only when the question names the system."""
    name = system_name(title)
    return named(text, name) if name and asks_about(question, name) else text
