"""The words title case leaves lower-case."""

from __future__ import annotations

# Articles, conjunctions, prepositions and a few short verbs that Title Case leaves lower-case:
# anything else lower-case in a title-cased line belongs to a sentence.
TITLE_SMALL_WORDS = frozenset(
    "a an the of for and or nor but in on at to by via from with without into onto over under as "
    "using towards toward through vs vs. versus is are be per upon than".split())

# The ones lowered when re-casing a title set in capitals: there no case tells a verb or a longer
# preposition apart from a word of the title, so only the shortest, unmistakable ones are lowered.
CAPS_TITLE_SMALL_WORDS = frozenset(
    {"a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the", "to", "via", "with"})
