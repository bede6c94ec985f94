"""BibTeX entries for the works an answer cites: one per paper, never one per passage.

Keys are readable and unique within the file (``cohan2020specter``, then ``cohan2020spectera``
for a second paper that would get the same key), so Zotero, JabRef and BibTeX import the file
without complaint.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from engine.render.common import Work, papers_of
from engine.types import Answer, PaperReference

# Characters with a meaning in BibTeX field values; "\" "^" "~" have no safe escape in plain
# fields, so they become spaces (paper text never needs them to be read).
_SPECIAL = re.compile(r"([{}\\&%$#_^~])")
_KEY_STOPWORDS = frozenset("a an the of on in for and or to with from by via at as is are towards toward "
                           "using into over under what how why when do does can".split())


def _balanced_braces(text: str) -> str:
    """``text`` without the braces that have no partner.

    BibTeX ends a ``{...}`` field at the brace that balances its opening one, counting ``\\}``
    like any other brace, so one stray ``}`` in a title ended the field early (and garbled the
    entry). Paired braces stay (escaped), so ``{with}`` still reads as written.
    """
    unmatched: set[int] = set()
    opened: list[int] = []
    for position, char in enumerate(text):
        if char == "{":
            opened.append(position)
        elif char == "}":
            if opened:
                opened.pop()
            else:
                unmatched.add(position)
    unmatched.update(opened)
    return "".join(char for position, char in enumerate(text) if position not in unmatched)


def _escape(text: str) -> str:
    return _SPECIAL.sub(lambda m: "\\" + m.group(1) if m.group(1) not in "\\^~" else " ",
                        " ".join(_balanced_braces(text).split()))


def _ascii_word(text: str) -> str:
    """Letters and digits only, accents dropped: ``Gödel`` -> ``godel``."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^A-Za-z0-9]", "", folded).lower()


def _surname(author: str) -> str:
    """The family name of ``"Arman Cohan"`` or ``"Cohan, Arman"``."""
    author = author.strip()
    if "," in author:
        return author.split(",", 1)[0]
    parts = author.split()
    return parts[-1] if parts else ""


def cite_key(reference: Work) -> str:
    """``surname + year + first significant title word``, e.g. ``cohan2020specter`` (ASCII only)."""
    surname = _ascii_word(_surname(reference.authors[0])) if reference.authors else ""
    words = (_ascii_word(word) for word in re.split(r"[\s:/–—-]+", reference.title))
    word = next((w for w in words if w and w not in _KEY_STOPWORDS and not w.isdigit()), "")
    key = f"{surname or 'anon'}{reference.year or ''}{word or 'paper'}"
    return key[:60]


def unique_keys(references: Iterable[Work]) -> list[str]:
    """One key per reference, with ``a``, ``b``, … appended where two papers would share one."""
    keys: list[str] = []
    used: set[str] = set()
    for reference in references:
        base = key = cite_key(reference)
        suffix = 0
        while key in used:
            key = base + _letters(suffix)
            suffix += 1
        used.add(key)
        keys.append(key)
    return keys


def _letters(index: int) -> str:
    """a, b, …, z, aa, ab, … for the index-th extra key."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(ord("a") + rest) + out
    return out


def cited_papers(answer: Answer) -> list[PaperReference]:
    """The answer's cited papers in citation order: one entry each, however many passages are cited."""
    return list(papers_of(answer))


def entry(reference: Work, key: str) -> str:
    """One BibTeX entry: ``@article`` when there is a DOI, otherwise ``@misc``."""
    fields = [("title", reference.title or "Untitled")]
    if reference.authors:
        fields.append(("author", " and ".join(" ".join(name.split()) for name in reference.authors)))
    if reference.year:
        fields.append(("year", str(reference.year)))
    if reference.doi:
        fields.append(("doi", reference.doi))
    if reference.arxiv_id:
        fields += [("eprint", reference.arxiv_id), ("archiveprefix", "arXiv")]
    if reference.url:
        fields.append(("url", reference.url))
    body = ",\n".join(f"  {name} = {{{_escape(value)}}}" for name, value in fields)
    kind = "article" if reference.doi else "misc"
    return f"@{kind}{{{key},\n{body}\n}}"


def to_bibtex(answer: Answer) -> str:
    papers = cited_papers(answer)
    entries = [entry(reference, key) for reference, key in zip(papers, unique_keys(papers), strict=True)]
    return "\n\n".join(entries) + ("\n" if entries else "")
