"""BibTeX for the works an answer cites (or any list of works), written through pybtex.

One entry per paper, never one per passage. The entry type follows what is known: ``@article``
with ``journal``, ``@inproceedings`` with ``booktitle``, ``@misc`` with ``eprint`` and
``archivePrefix`` for an arXiv paper, ``@misc`` otherwise. DOIs and URLs are written verbatim (an
escaped ``\\_`` breaks the link in biblatex); LaTeX's special characters are escaped in text fields
only; words with capitals in titles are braced so styles that lower-case titles keep "CRISPR";
names are written ``Family, Given and ...``. Keys are readable and unique within the file
(``cohan2020specter``, then ``cohan2020spectera``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pybtex.database import BibliographyData, Entry, Person
from pybtex.database.output.bibtex import Writer

from engine.bibliography import Bibliography, is_group_author
from engine.ingest.names import split_name
from engine.render.common import papers_of
from engine.text.characters import ascii_fold
from engine.text.stopwords import STOP_WORDS
from engine.types import Answer, PaperReference

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "{": "", "}": ""}
_PROCEEDINGS = re.compile(r"\b(proceedings|conference|workshop|symposium|meeting)\b|^(CHI|OSDI|NeurIPS|ICML)\b", re.I)


def escape_latex(text: str) -> str:
    """Text with LaTeX's special characters escaped (braces dropped: no title needs them)."""
    return "".join(_LATEX.get(ch, ch) for ch in " ".join(text.split()))


def brace_title(title: str) -> str:
    """Escaped title with every word that carries a capital after its first letter, or any capital
    after the first word, braced: ``{SPECTER}: Document-level ...``, ``... in {Arabidopsis}``."""
    words = escape_latex(title).split(" ")
    out = []
    for position, word in enumerate(words):
        letters = re.sub(r"\\[a-z]+\{\}|\\.", "", word)
        capitals_inside = any(ch.isupper() for ch in letters[1:])
        if capitals_inside or (position and any(ch.isupper() for ch in letters)):
            core = word.rstrip(".,:;?!")
            out.append("{" + core + "}" + word[len(core):])
        else:
            out.append(word)
    return " ".join(out)


def _ascii_word(text: str) -> str:
    """Letters and digits only, accents dropped: ``Gödel`` -> ``godel``."""
    return re.sub(r"[^A-Za-z0-9]", "", ascii_fold(text)).lower()


def cite_key(work: Bibliography) -> str:
    """``family + year + first significant title word``, e.g. ``cohan2020specter`` (ASCII only)."""
    first = work.authors[0] if work.authors else ""
    family = _ascii_word(first.split()[0] if is_group_author(first) else split_name(first).family) if first else ""
    words = (_ascii_word(word) for word in re.split(r"[\s:/–—-]+", work.title))
    word = next((w for w in words if w and w not in STOP_WORDS and not w.isdigit()), "")
    key = f"{family or 'anon'}{work.year or ''}{word or 'paper'}"
    return key[:60]


def unique_keys(works: Iterable[Bibliography]) -> list[str]:
    """One key per work, with ``a``, ``b``, … appended where two papers would share one."""
    keys: list[str] = []
    used: set[str] = set()
    for work in works:
        base = key = cite_key(work)
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


def entry_type(work: Bibliography) -> str:
    """``article``, ``inproceedings`` or ``misc``, from the venue and identifiers that are known."""
    if work.venue:
        return "inproceedings" if _PROCEEDINGS.search(work.venue) else "article"
    return "misc"


def _entry(work: Bibliography) -> Entry:
    kind = entry_type(work)
    fields: list[tuple[str, str]] = [("title", brace_title(work.title or "Untitled"))]
    if kind == "article":
        fields.append(("journal", escape_latex(work.venue)))
    elif kind == "inproceedings":
        fields.append(("booktitle", escape_latex(work.venue)))
    if work.year:
        fields.append(("year", str(work.year)))
    if work.doi:
        fields.append(("doi", work.doi))
    if work.arxiv_id:
        fields += [("eprint", work.arxiv_id), ("archivePrefix", "arXiv")]
    if work.url:
        fields.append(("url", work.url))
    persons = [Person(_person(name)) for name in work.authors if name.strip()]
    return Entry(kind, fields=fields, persons={"author": persons} if persons else {})


def _person(name: str) -> str:
    """``Family, Given`` with LaTeX specials escaped (pybtex reads the particles off the family part);
    an organisation braced whole, so its "and" does not split it into people."""
    if is_group_author(name):
        return "{" + escape_latex(name) + "}"
    parsed = split_name(name)
    family, given = escape_latex(parsed.family), escape_latex(parsed.given)
    return f"{family}, {given}" if given else family


class _VerbatimWriter(Writer):  # type: ignore[misc]
    """pybtex's BibTeX writer without its LaTeX encoding: text fields arrive escaped already, and
    DOIs and URLs must stay verbatim (its codec would write ``10.1000/x\\_y``)."""

    def _encode(self, text: str) -> str:
        return text


def _write(data: BibliographyData) -> str:
    return str(_VerbatimWriter(encoding="UTF-8").to_string(data))


def works_to_bibtex(works: Sequence[Bibliography]) -> str:
    """A BibTeX file with one entry per work, keys unique."""
    if not works:
        return ""
    data = BibliographyData(entries=list(zip(unique_keys(works), (_entry(work) for work in works), strict=True)))
    return _write(data)


def entry(work: Bibliography, key: str) -> str:
    """One BibTeX entry under ``key``."""
    return _write(BibliographyData(entries=[(key, _entry(work))])).strip()


def to_bibtex(answer: Answer) -> str:
    return works_to_bibtex([paper.bib for paper in cited_papers(answer)])
