"""English words, to tell a word broken at a line end ("represen-" / "tation") from a compound
whose hyphen is real ("virus-" / "positive").

The list is pyspellchecker's English word frequencies (bundled with the package, no download),
loaded on first use; the parse workers' fork server loads it once (engine.ingest.worker), so each
worker has it at no cost.
"""

from __future__ import annotations

import logging
from functools import cache

log = logging.getLogger(__name__)

# pyspellchecker counts words in subtitles; its rarest entries (count 50) include misspellings and
# names, so a half of a compound must be seen more often than that to count as a word of its own.
COMMON_COUNT = 50


@cache
def english_counts() -> dict[str, int]:
    """Lower-case English words with their frequency counts; empty when the list cannot be loaded."""
    try:
        from spellchecker import SpellChecker

        return dict(SpellChecker(language="en", distance=1).word_frequency.dictionary)
    except (ImportError, OSError, ValueError) as exc:  # a broken install: every line-end hyphen is a break
        log.warning("the English word list (pyspellchecker) cannot be loaded (%s); words hyphenated at line "
                    "ends are always joined", exc)
        return {}
