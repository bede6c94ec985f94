"""Misspelled query words, corrected against the words the sources actually hold.

Researchers type fast: "optomechincal", "hetergeniety", "orgnelle". BM25 finds nothing for such a
word and the embedder sees an unknown string, so the question loses its most specific term. A
word is corrected only when every one of these holds:

* it is alphabetic and at least ``MIN_LENGTH`` letters long (short words and symbols such as
  gene names or model ids are left alone);
* at most one passage in all sources holds its stem, and it is not a known English word
  (pyspellchecker's word list: a real word that the papers happen not to use is not a typo);
* a word the papers do use is within one edit of it (two for words of ``LONG_WORD`` letters or
  more; an edit is an insertion, deletion, substitution or swap of neighbours). That word is
  found the way FTS5 would index it: candidate stems come from the index's own vocabulary
  (``fts5vocab``, or a datastore's postings; stems with the same first letter, held by at least
  ``MIN_DOCUMENTS`` passages), and each candidate is checked against the real words of passages that hold it, so
  the correction shown is a word from the papers, never an invented one.

The search then reads the typed word followed by its correction, in BM25 and in the embedder
(on the dev set that beat replacing the typed word, 0.621 against 0.619 nDCG@10), and says which
correction it made.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Iterable, Sequence
from functools import lru_cache

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from engine.errors import EngineError
from engine.retrieve.fts import FtsStemmer, query_terms, quote
from engine.retrieve.source import PassageSource
from engine.text.tokens import LETTERS, WORD

log = logging.getLogger(__name__)

MIN_LENGTH = 5
LONG_WORD = 8  # words this long may hold two typos
# A word one passage uses may be that passage's typo; a correction must be used by this many
# passages, and by MORE_COMMON times as many as the typed word.
MIN_DOCUMENTS = 2
MORE_COMMON = 3
CANDIDATES = 6  # close stems checked against real words, closest first
# Unknown words searched for a correction per question: a real question holds a few typos, while
# a 10,000-character paste of junk would otherwise cost 48 searches (~1 s on 10k passages).
MAX_SEARCHES = 8
PASSAGES_PER_CANDIDATE = 10  # passages whose words are checked: enough to meet the right form
# pyspellchecker's English list counts words in subtitles; its rarest entries (count 50) include
# misspellings and names ("caner"), so only words seen more often count as known.
KNOWN_WORD_COUNT = 50



def allowed_edits(word: str) -> int:
    """How many edits a correction of ``word`` may be away: 1, or 2 for long words."""
    return 2 if len(word) >= LONG_WORD else 1


@lru_cache(maxsize=1)
def _english_counts() -> dict[str, int]:
    try:
        from spellchecker import SpellChecker

        return dict(SpellChecker(language="en", distance=1).word_frequency.dictionary)
    except (ImportError, OSError, ValueError) as exc:  # a broken install: unindexed words are all candidates
        log.warning("the English word list (pyspellchecker) cannot be loaded (%s); spelling correction cannot "
                    "tell English words from typos", exc)
        return {}


def is_english_word(word: str) -> bool:
    return _english_counts().get(word.lower(), 0) > KNOWN_WORD_COUNT


class SpellingCorrector:
    """Finds corrections for a query's unknown words in the vocabularies of ``sources``."""

    def __init__(self, sources: Sequence[PassageSource]) -> None:
        self.sources = list(sources)
        self._stemmer = FtsStemmer()
        self._known: dict[str, str | None] = {}

    def corrections(self, query: str) -> dict[str, str]:
        """``{typed word: correction}`` for the query's misspelled words (lower case), in query order."""
        words = [w for w in query_terms(query, keyword_forms=False) if len(w) >= MIN_LENGTH and w.isalpha()]
        unseen = [w for w in words if w not in self._known]
        if unseen:
            found = self._stemmer.stems(unseen)  # None: some word is not one FTS5 token
            stems: list[str | None] = list(found) if found is not None else [None] * len(unseen)
            searches = 0
            for word, stem in zip(unseen, stems, strict=True):
                self._known[word] = None
                if stem is None:
                    continue
                try:
                    uses = self._uses_if_unknown(word, stem)
                    if uses is None or searches >= MAX_SEARCHES:
                        continue
                    searches += 1
                    self._known[word] = self._correct(word, stem, uses)
                except (EngineError, sqlite3.DatabaseError) as exc:  # a damaged index: search on uncorrected
                    log.warning("spelling correction skipped for %r: %s", word, exc)
        return {w: fixed for w in words if (fixed := self._known[w]) is not None}

    def _uses_if_unknown(self, word: str, stem: str) -> int | None:
        """How many passages hold ``stem`` when that is too few to call ``word`` known, else None."""
        uses = self._frequency(stem)
        # The papers' vocabulary first: most query words are in it, and the English list is only
        # loaded (~0.3 s, once) when a word is not.
        return None if uses >= MIN_DOCUMENTS or is_english_word(word) else uses

    def _correct(self, word: str, stem: str, uses: int) -> str | None:
        """The closest word the papers use for an unknown ``word``, if one is close enough."""
        candidates = self._close_stems(word, stem, at_least=max(MIN_DOCUMENTS, MORE_COMMON * uses))
        best: tuple[int, int, str] | None = None  # (edits, -passages, correction)
        for candidate, documents in candidates:
            if best is not None and best[0] == 1:
                break  # one edit is as close as a correction gets (candidates: closest, then most used, first)
            surface = self._closest_surface_word(word, candidate)
            if surface is None:
                continue
            edits = DamerauLevenshtein.distance(word, surface)
            if edits > 1 and _same_but_ending(word, surface):
                continue  # "transcriptase" -> "transcripts" is another word, not a typo
            if best is None or (edits, -documents) < best[:2]:
                best = (edits, -documents, surface)
        return best[2] if best else None

    def _frequency(self, stem: str) -> int:
        """Passages holding ``stem``, over all sources."""
        return sum(source.stem_frequencies(stem, stem + "\0").get(stem, 0) for source in self.sources)

    def _close_stems(self, word: str, stem: str, at_least: int) -> list[tuple[str, int]]:
        """Indexed stems that may be the stem of a correction, closest first, with their passage counts.

        A stem is a prefix of its word less a suffix the stemmer rewrote, so a candidate is compared
        both with the typed word's stem and with the typed word's longer prefixes
        ("hetergeniety" stems to "hetergenieti", far from "heterogen", but its prefix "hetergen" is close).
        """
        first = stem[0]
        vocabulary: dict[str, int] = {}
        for source in self.sources:
            for term, documents in source.stem_frequencies(first, chr(ord(first) + 1)).items():
                vocabulary[term] = vocabulary.get(term, 0) + documents
        choices = [term for term, documents in vocabulary.items() if documents >= at_least and term.isalpha()]
        if not choices:
            return []
        limit = allowed_edits(word) + 1  # stems differ a little more than words; the surface check is exact
        closest: dict[str, int] = {}
        for probe in _probes(word, stem):
            for term, edits, _ in process.extract(probe, choices, scorer=DamerauLevenshtein.distance,
                                                  score_cutoff=limit, limit=None):
                closest[term] = min(edits, closest.get(term, edits))
        ranked = sorted(closest, key=lambda term: (closest[term], -vocabulary[term], term))
        return [(term, vocabulary[term]) for term in ranked[:CANDIDATES]]

    def _closest_surface_word(self, word: str, candidate_stem: str) -> str | None:
        """The real word nearest ``word`` among those with stem ``candidate_stem`` in passages that hold it."""
        fts_query = quote(candidate_stem)
        if self._stemmer.stems([candidate_stem]) != [candidate_stem]:
            # FTS5 stems a query word, and stemming a stem can cut it further ("represent" ->
            # "repres"); as a prefix query it still reaches every word with the wanted stem.
            fts_query += " *"
        limit = allowed_edits(word)
        best: tuple[int, str] | None = None
        for source in self.sources:
            found = source.lexical(fts_query, PASSAGES_PER_CANDIDATE)
            words = _distinct_words(hit.search_text for hit in source.hits([pid for pid, _ in found]))
            near = [w for w in words if w[0] == word[0] and abs(len(w) - len(word)) <= limit and w != word
                    and DamerauLevenshtein.distance(word, w) <= limit]
            if not near:
                continue
            stems = self._stemmer.stems(near) or []
            for surface, surface_stem in zip(near, stems, strict=False):
                if surface_stem == candidate_stem:
                    edits = DamerauLevenshtein.distance(word, surface)
                    if best is None or (edits, surface) < best:
                        best = (edits, surface)
        return best[1] if best else None


def _same_but_ending(word: str, other: str, ending: int = 3) -> bool:
    """Whether the two words differ only in their last ``ending`` letters (a suffix, not a slip)."""
    common = 0
    for a, b in zip(word, other, strict=False):
        if a != b:
            break
        common += 1
    return common >= min(len(word), len(other)) - ending


def _probes(word: str, stem: str) -> list[str]:
    """The strings a candidate stem is compared with: the stem and the word's prefixes a suffix away."""
    probes = [stem, word]
    probes += [word[:end] for end in range(max(MIN_LENGTH - 1, len(word) - 6), len(word))]
    return list(dict.fromkeys(probes))


def _distinct_words(texts: Iterable[str]) -> set[str]:
    words: set[str] = set()
    for text in texts:
        words.update(LETTERS.findall(text.lower()))
    return words


def with_corrections(text: str, corrections: dict[str, str]) -> str:
    """``text`` with each corrected word followed by its correction ("optomechincal optomechanical")."""
    if not corrections:
        return text

    def add(match: re.Match[str]) -> str:
        typed = match.group(0)
        correction = corrections.get(typed.lower())
        return typed if correction is None else f"{typed} {correction}"

    return WORD.sub(add, text)
