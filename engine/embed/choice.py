"""When a library needs the multilingual embedder: enough of its papers are not in English.

The bundled all-MiniLM-L6-v2 was trained on English; a question in one language finds a paper in
another by their shared words alone (docs/languages.md). multilingual-e5-small finds it by meaning,
at about ten times the embedding time, so it is used where the library asks for it: a few papers
in another language are searched well enough by their words, a library of which a quarter is
German or Chinese is not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from engine.embed.e5 import MULTILINGUAL_EMBEDDER

# At least this many papers, and this share of the papers whose language is known, not in English.
MIN_OTHER_PAPERS = 3
MIN_OTHER_SHARE = 0.25
_NOT_A_LANGUAGE = ("", "zxx")  # not known; a text layer with no readable text


@dataclass(frozen=True)
class LanguageMix:
    """How many of a library's papers are in each language other than English."""

    papers: int  # papers whose language is known
    other: dict[str, int]

    @property
    def other_papers(self) -> int:
        return sum(self.other.values())

    @property
    def needs_multilingual(self) -> bool:
        return self.other_papers >= MIN_OTHER_PAPERS and self.other_papers >= MIN_OTHER_SHARE * self.papers

    def describe(self) -> str:
        """ "5 of 12 papers are not in English (de 3, zh 2)" """
        languages = ", ".join(f"{language} {count}" for language, count in
                              sorted(self.other.items(), key=lambda item: (-item[1], item[0])))
        return f"{self.other_papers} of {self.papers} papers are not in English ({languages})"


def language_mix(paper_languages: Mapping[str, str]) -> LanguageMix:
    """The mix of a library from each paper's language (``Library.paper_languages``)."""
    known = [language for language in paper_languages.values() if language not in _NOT_A_LANGUAGE]
    return LanguageMix(len(known), dict(Counter(language for language in known if language != "en")))


def switch_notice(mix: LanguageMix) -> str:
    """What a user is told when ingest switched their library to the multilingual embedder."""
    return (f"{mix.describe()}, so this library now searches with the multilingual embedder "
            f"({MULTILINGUAL_EMBEDDER}): a question finds papers in other languages by meaning. The library "
            "is embedded again (about ten times slower than the English model); a datastore embedded by the "
            "English model is searched by keywords until `quire datastore embed NAME` re-embeds it. To keep "
            "the English model: quire settings --set retrieval.embedder= --set retrieval.multilingual_switch=false")
