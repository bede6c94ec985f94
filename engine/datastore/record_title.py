"""Separate a title from the abstract glued after it, as some SciREX-derived records have it.

Such records carry ``"document: <Title> <Abstract...>"`` in their title field, so every reference
and BibTeX entry would show a whole abstract as the title. The title is recovered from its
Title Case: it ends where the abstract's first sentence begins, which is found from the first
lowercase content word (titles capitalise every content word) walked back to the capitalised
word that opens that sentence. The abstract is kept, put in front of the record's text.
"""

from __future__ import annotations

import re

from engine.text.titles import TITLE_SMALL_WORDS

_PREFIX = re.compile(r"^\s*document\s*:\s*", re.IGNORECASE)
# Words that open an abstract's first sentence but never end a title.
_SENTENCE_OPENERS = frozenset("The A An Although Though While Whereas Despite However Recently Since Because "
                              "Unlike".split())
_PRONOUNS = frozenset({"We", "This", "Our", "These", "It"})  # "Random Erasing ... We introduce Random Erasing"
_ACRONYM = re.compile(r"^\(([A-Z][A-Za-z0-9-]*?)s?\)[.,;:]?$")
_LONGEST_TITLE_WORDS = 40
_ABSTRACT_WORDS = 25  # a "title" longer than this that holds sentences is an abstract


def _starts_lowercase(word: str) -> bool:
    stripped = word.lstrip("(\"'“‘[")
    return bool(stripped) and stripped[0].islower()


def _acronym_start(words: list[str], acronym_at: int, acronym: str) -> int | None:
    """Where the phrase an acronym like ``(CNNs)`` stands for begins, matching its initials."""
    letters = [c for c in acronym if c.isupper()]
    start = acronym_at - len(letters)
    if start < 1:
        return None
    initials = [w.lstrip("(\"'“")[:1].upper() for w in words[start:acronym_at]]
    return start if initials == letters else None


def split_glued_title(title: str) -> tuple[str, str]:
    """``(title, abstract)`` from ``"document: Title Abstract"``; ``(title, "")`` for a normal title.

    A title field without the ``document:`` marker is returned unchanged (only records known to
    be glued are split, so an ordinary long title is never cut), unless it is plainly an abstract:
    over 25 words and several sentences. That becomes the abstract, with no title.
    """
    match = _PREFIX.match(title)
    if not match:
        if len(title.split()) > _ABSTRACT_WORDS and ". " in title:
            return "", title  # an abstract where the title should be: no title is better than a wrong one
        return title, ""
    words = title[match.end():].split()
    for first_lower in range(2, min(len(words), _LONGEST_TITLE_WORDS)):
        if not _is_content_lowercase(words[first_lower]):
            continue
        if words[first_lower - 1] not in _PRONOUNS and not _sentence_like(words[first_lower:first_lower + 6]):
            continue
        split = first_lower - 1
        # Back to the capitalised word that opens the sentence: "Learning to walk over a graph",
        # "Motivated by the recent", "Estimating the 6D pose".
        while split > 1 and (_starts_lowercase(words[split]) or _is_small(words[split - 1])):
            split -= 1
        acronym = _ACRONYM.match(words[split])
        if acronym:
            # "... Segmentation Convolutional Neural Networks (CNNs) have been ...": the sentence
            # starts with the phrase the acronym abbreviates.
            split = _acronym_start(words, split, acronym.group(1)) or split
        while split > 2 and (words[split - 1] in _SENTENCE_OPENERS):
            split -= 1  # "... Networks The FlowNet demonstrated": titles do not end with "The"
        if split >= 2 and not _starts_lowercase(words[split]):
            return " ".join(words[:split]), " ".join(words[split:])
    return " ".join(words), ""


def _is_content_lowercase(word: str) -> bool:
    return _starts_lowercase(word) and word.lower().strip(",.;:") not in TITLE_SMALL_WORDS


def _is_small(word: str) -> bool:
    return _starts_lowercase(word) and word.lower() in TITLE_SMALL_WORDS


def _sentence_like(words: list[str]) -> bool:
    """A sentence's next words are mostly lowercase content words; a Title Case run is not."""
    return sum(1 for word in words if _is_content_lowercase(word)) >= 3
