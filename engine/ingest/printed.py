"""What a paper's first page prints about itself: its year, venue and DOI, and cover sheets.

Journals print a citation line ("Cancer Cell 40, 1060–1069", "Nucleic Acids Research, 2024, 52,
4295", "Nature Communications | (2022) 13:2882"), proceedings a header ("Proceedings of ...,
pages 84–91"), preprint servers a stamp ("bioRxiv preprint", "this version posted March 21,
2022"). Lines about the copy rather than the paper ("Downloaded from ... on June 25, 2025") are
never read for a year.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from engine.text.titles import CAPS_TITLE_SMALL_WORDS

_Y = r"(1[89]\d\d|20\d\d)"
_DOWNLOADED = re.compile(r"download|accessed|retrieved|for personal use|printed on", re.I)
# Year evidence, strongest first: a proceedings header (its copyright line may name the year the
# volume was typeset), when the paper came out, its copyright line, a citation line, then when it
# was accepted, then received.
_YEAR_RANKS = [
    re.compile(rf"^(?:in\s+)?(?:proceedings|to appear)\b[^\n]{{0,120}}?\b{_Y}\b", re.I | re.M),
    re.compile(r"\b(?:published(?! by)(?: online)?|posted|publication date|advance access publication date)"
               rf"\b[^\n]{{0,40}}?\b{_Y}\b", re.I),
    re.compile(rf"(?:©|\(c\)|c\u20dd|copyright)[^\n]{{0,30}}?\b{_Y}\b", re.I),
    re.compile(rf"(?:\b{_Y}\s*[,;]\s*(?:vol\.\s*)?\d+\s*[,:;(]|\(\s*{_Y}\s*\)\s*,?\s*\d+\s*:|"
               rf"et al\.,\s*[A-Z][^\n]{{0,40}}?\d+\s*,\s*[\de–-]+\s*\(\s*{_Y}\s*\))"),
    re.compile(rf"\baccepted\b[^\n]{{0,40}}?\b{_Y}\b", re.I),
    re.compile(rf"\breceived\b[^\n]{{0,40}}?\b{_Y}\b", re.I),
]
# DOIs whose registrant puts the year in the suffix: bioRxiv's date, Elsevier's journal codes, IOP's.
_DOI_YEAR = [re.compile(r"^10\.1101/(20\d\d)\.\d\d\.\d\d\."), re.compile(r"^10\.1016/j\.[a-z]+\.(20\d\d)\."),
             re.compile(r"^10\.1088/[\d-]+/(20\d\d)/")]
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>{}|\\^`]+)")
_DOI_TAIL = re.compile(r"(?:[.,;:)\]}>'\"’”]|\.pdf|/full|/abstract)+$", re.I)

_NAME = r"[A-Z][\w&.:'’ -]*?[\w.]"  # a journal name as printed: "J. Chem. Theory Comput.", "G3"
_VENUE_LINES = [
    re.compile(r"^(?:In\s+)?(Proceedings of .+?)(?:\s*\([^)]*\d[^)]*\))?(?:[.,]\s*(?:pages\b|pp\.|Vol\.|Volume\b).*|"
               r",\s*[A-Z][a-z]+,.*|,\s*[A-Z][a-z]+\.?\s+\d{1,2}\b.*|[,.]?$)"),  # then a place, or a date
    re.compile(r"^To appear in (.+?)\.?$"),
    re.compile(rf"^Cite (?:This|this)\s*:\s*({_NAME}),?\s+{_Y},"),
    re.compile(rf"et al\.,\s*{_Y},\s*({_NAME})\s+\d+,"),
    re.compile(rf"et al\.,\s*({_NAME})\s+\d+,\s*[\de–-]+\s*\({_Y}\)"),
    re.compile(rf"et al\.?\s+([A-Za-z][\w&.:'’ -]*?[\w.])\s+(?:\({_Y}\)\s*\d+:|{_Y};\d+)"),  # "eLife"
    re.compile(rf"^({_NAME})\s*\|?\s*\({_Y}\),?\s*\d+:"),
    re.compile(rf"^({_NAME})\s*,\s*{_Y}\s*,\s*\d+"),
    re.compile(rf"^({_NAME})\s+{_Y},\s*(?:Vol\.\s*)?\d+"),
    re.compile(rf"^({_NAME})\s+\d+,\s*\d+[–-]\d+,\s*\w+ \d+, {_Y}$"),
    re.compile(r"^([A-Z][\w ]+?)\s*•\s*\d+:"),
    re.compile(r"^([A-Z][\w ]+?)\s+Volume\s+\d+\s*\|"),
    re.compile(r"^(bioRxiv|medRxiv|arXiv|ChemRxiv|Research Square) preprint\b"),
]
_SERVER_STAMPS = [
    (re.compile(r"Electronic copy available at:?\s*(?:https?://)?(?:papers\.)?ssrn\.com", re.I), "SSRN"),
    (re.compile(r"^DOI:\s*(?:https?://doi\.org/)?10\.21203/rs\.", re.I), "Research Square"),
    (re.compile(r"^(?:DOI:\s*)?(?:https?://doi\.org/)?10\.48550/arXiv\.", re.I), "arXiv"),
]
_COVER = re.compile(r"previously published works|escholarship|this article was downloaded|cover page|"
                    r"terms of use|downloaded from", re.I)
_COVER_LABELS = ("Title", "Journal", "Authors", "Publication Date", "DOI", "Permalink", "ISSN", "Author")


def year_from_text(lines: Iterable[str]) -> int | None:
    """The year the page says the paper came out, by the strongest evidence it prints."""
    kept = [line for line in lines if not _DOWNLOADED.search(line)]
    text = "\n".join(kept)
    for pattern in _YEAR_RANKS:
        for match in pattern.finditer(text):
            year = next(int(group) for group in match.groups() if group)
            if 1900 <= year <= 2100:
                return year
    return None


def year_from_doi(doi: str) -> int | None:
    for pattern in _DOI_YEAR:
        match = pattern.match(doi)
        if match:
            return int(match.group(1))
    return None


def clean_doi(text: str) -> str:
    """The first DOI in ``text`` (a URL, "doi:...", a sentence), without trailing punctuation."""
    match = _DOI.search(text)
    if not match:
        return ""
    doi = match.group(1)
    while True:
        trimmed = _DOI_TAIL.sub("", doi)
        # A closing bracket belongs to the DOI only when it also opens one: "10.1002/(SICI)1097-..."
        if trimmed == doi:
            break
        doi = trimmed
    if doi.count("(") > doi.count(")") and match.group(1)[len(doi):].startswith(")"):
        doi += ")"
    return doi


def venue_from_lines(lines: list[str]) -> str:
    """The journal or proceedings the page's header, footer or citation line names."""
    for index, line in enumerate(lines):
        line = " ".join(line.split())
        # A header wrapped onto a second line: "... Human Factors in Computing" / "Systems (CHI '23), ...".
        if re.match(r"^(?:In\s+)?Proceedings of\b", line) and not re.search(r",\s*(pages|pp\.|Vol)", line) \
                and re.search(r"[A-Za-z]$", line) and index + 1 < len(lines):
            line = f"{line} {' '.join(lines[index + 1].split())}"
        for pattern in _VENUE_LINES:
            match = pattern.search(line)
            if match:
                name = next(group for group in match.groups() if group and not re.fullmatch(_Y, group))
                name = re.sub(r"\s*[,;:]$", "", name).strip()
                if len(name) >= 2 and not re.search(r"\d{5,}", name):
                    return name
    # Preprint servers that print no "... preprint" line stamp every page with their own address.
    for stamp, server in _SERVER_STAMPS:
        if any(stamp.search(line) for line in lines):
            return server
    return ""


def is_cover_sheet(text: str) -> bool:
    """A repository's or publisher's cover page, printed before the paper's own first page."""
    return bool(_COVER.search(text[:3000])) and bool(re.search(r"^(Title|Journal|Permalink)$", text, re.M))


def cover_fields(lines: list[str]) -> dict[str, str]:
    """``{"Title": ..., "Journal": ..., ...}`` from a cover sheet's label lines (eScholarship)."""
    fields: dict[str, str] = {}
    label = ""
    for line in lines:
        line = " ".join(line.split())
        if line in _COVER_LABELS:
            label = line
            continue
        if label:
            fields[label] = f"{fields[label]} {line}" if label in fields and label == "Title" else \
                fields.get(label, line)
    return fields


def titlecase_caps(title: str, acronyms: set[str]) -> str:
    """A title set in capitals, in title case: small words lower, known acronyms kept.

    ``acronyms`` are the words the page prints in capitals inside ordinary text ("CMB", "DNA"):
    only those stay capitalised, since in an all-capitals title nothing else tells them apart.
    """
    words = title.split()
    out = []
    for position, word in enumerate(words):
        parts = re.split(r"(-)", word)
        cased = []
        for part in parts:
            core = part.strip(".,:;()")
            # "AS", "IN" in a capitals title are words, not acronyms
            if position and part.lower() in CAPS_TITLE_SMALL_WORDS:
                cased.append(part.lower())
            elif core in acronyms or any(ch.isdigit() for ch in core):
                cased.append(part)
            else:
                cased.append(part[:1] + part[1:].lower())
        out.append("".join(cased))
    return " ".join(out)


_CAPITAL_WORD = re.compile(r"\b[A-Z][A-Z0-9]{1,7}s?\b")


def caps_title_recased(title: str, text: str) -> str:
    """``title`` in title case when it is set in capitals, else as it is: a word stays in capitals when
    ``text`` (the page, or a record's abstract) prints it in capitals outside the title too."""
    if not title or not mostly_capitals(title):
        return title
    in_title = _CAPITAL_WORD.findall(title)
    in_text = _CAPITAL_WORD.findall(text)
    acronyms = {word for word in set(in_text) if not word.isdigit()
                and in_text.count(word) > in_title.count(word) * max(1, text.count(title) or 1)}
    return titlecase_caps(title, acronyms)


def mostly_capitals(text: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    return len(letters) >= 8 and sum(ch.isupper() for ch in letters) >= 0.9 * len(letters)
