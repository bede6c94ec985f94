"""Bibliographic metadata from the PDF's info dictionary and its first page.

Each field comes from evidence in the file: the info dictionary when it is plausible, the
first page's layout (the largest type near the top is the title), and DOI / arXiv patterns in
the text. A field with no evidence stays empty; nothing is guessed from the file name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from engine.bibliography import Bibliography
from engine.ingest import names, printed
from engine.ingest.byline import choose_authors, layout_authors, looks_like_name, metadata_authors, name_case
from engine.ingest.layout import clean_word
from engine.ingest.words import join_lines
from engine.ingest.xmp import XmpFields, read_xmp
from engine.text.characters import ascii_fold

_ARXIV_NEW = re.compile(r"arXiv:\s?(\d{4}\.\d{4,5})(v\d+)?", re.I)
_ARXIV_OLD = re.compile(r"arXiv:\s?([a-z\-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?", re.I)
_YEAR_CONTEXT = re.compile(
    r"(proceedings|conference|workshop|symposium|copyright|©|c\u20dd|journal|arxiv|published|accepted)"
    r"[^\n]{0,120}?\b(19[5-9]\d|20[0-4]\d)\b",
    re.I,
)
_BAD_TITLES = re.compile(
    r"^(untitled|microsoft word|proceedings of|slide \d|document\d*$|title$)|\.(dvi|docx?|tex|pdf|ps)$", re.I
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ufeff\ufffd]")
MAX_INFO_CHARS = 1000  # an Info field longer than this is cut before it is read
MAX_TITLE_CHARS = 300
_REFERENCES_LINE = re.compile(r"^\s*((\d+|[IVX]+)\.?\s*)?(references|bibliography)\s*(:|$)", re.I | re.M)
_ABSTRACT_HEAD = re.compile(r"^\s*abstract\b[\s.:—–-]*", re.I)
# Bold lines that label the page rather than name the paper.
_LABEL_LINE = re.compile(r"^(title|abstract|research article|article|original article|review|preprint|manuscript)\b",
                         re.I)
_SECTION_HEAD = re.compile(
    r"^\s*((\d+|[IVX]+)\.?\s+)?(introduction|keywords|index terms|background|ccs concepts)\b", re.I
)


@dataclass(frozen=True)
class DocumentMeta:
    bib: Bibliography = field(default_factory=Bibliography)
    abstract: str = ""
    # Where each filled field came from ("xmp", "info", "page", "cover", "arxiv", "doi"), for display
    # and for deciding what a datastore record may fill in.
    origins: tuple[tuple[str, str], ...] = ()


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def _plausible_title(title: str) -> bool:
    title = title.strip()
    return len(title.split()) >= 2 and len(title) <= 300 and not _BAD_TITLES.search(title)


def layout_title(page_dict: dict[str, Any], page_height: float) -> tuple[str, int]:
    """The largest-type text in the top half of the first page, and the block index it ends in.

    Preprints typed in a word processor often set the title in bold at the body's size; with no
    larger type on the page, bold lines that open it are the title.
    """
    candidates: list[tuple[float, int, str, bool]] = []
    for block_index, block in enumerate(page_dict.get("blocks", [])):
        for line in block.get("lines", []):
            if tuple(round(v) for v in line.get("dir", (1, 0))) != (1, 0):
                continue  # rotated side stamps
            if line["bbox"][1] > page_height * 0.5:
                continue
            text = "".join(span["text"] for span in line["spans"]).strip()
            if sum(ch.isalpha() for ch in text) < 2:
                continue
            inked = [span for span in line["spans"] if span["text"].strip()]
            size = max(span["size"] for span in inked)
            bold = all(span.get("flags", 0) & 16 or "bold" in span.get("font", "").lower() for span in inked)
            candidates.append((round(size * 2) / 2, block_index, text, bold))
    if not candidates:
        return "", -1
    top_size = max(size for size, *_ in candidates)
    body_sizes = sorted(size for size, *_ in candidates)
    if top_size <= body_sizes[len(body_sizes) // 2]:
        return _bold_opening(candidates)  # no line is larger than ordinary text
    lines = [(block, text) for size, block, text, _ in candidates if size == top_size]
    first_block = lines[0][0]
    kept = [text for block, text in lines if block - first_block <= 2]
    last_block = max(block for block, _ in lines if block - first_block <= 2)
    title = _join_lines(kept)
    if len(title.split()) > 40:
        return "", -1
    return title, last_block


def _bold_opening(candidates: list[tuple[float, int, str, bool]]) -> tuple[str, int]:
    """The bold lines the page opens with, when they read as a title rather than a label."""
    kept: list[tuple[int, str]] = []
    for size, block, text, bold in candidates:
        if not bold or (kept and (size != candidates[0][0] or block - kept[-1][0] > 2)):
            break
        kept.append((block, text))
    title = _join_lines([text for _, text in kept])
    if not 3 <= len(title.split()) <= 40 or title.endswith(":") or _LABEL_LINE.match(title):
        return "", -1
    return title, kept[-1][0]


def _join_lines(lines: list[str]) -> str:
    return join_lines(" ".join(clean_word(word) for word in line.split()) for line in lines)


def rotated_text(page_dict: dict[str, Any]) -> str:
    """Text set at an angle, such as arXiv's side stamp; layout drops it from the page's lines."""
    return "\n".join("".join(span["text"] for span in line["spans"])
                     for block in page_dict.get("blocks", []) for line in block.get("lines", [])
                     if tuple(round(v) for v in line.get("dir", (1, 0))) != (1, 0))


def find_doi(text: str) -> str:
    return printed.clean_doi(text)


def crossmark_doi(links: Sequence[str]) -> str:
    """The DOI a first page's CrossMark link carries ("crossmark.crossref.org/dialog/?doi=10.1126%2F...").
    Publishers put that button on the paper's own first page for its own DOI; other links there (a
    reference, a funder) may name other papers, so only CrossMark's is read."""
    for link in links:
        parsed = urlparse(link)
        if parsed.netloc.lower().endswith("crossmark.crossref.org"):
            found = parse_qs(parsed.query).get("doi", [""])[0]
            if doi := printed.clean_doi(unquote(found)):
                return doi
    return ""


def find_arxiv_id(text: str) -> str:
    match = _ARXIV_NEW.search(text) or _ARXIV_OLD.search(text)
    return match.group(1) if match else ""


def find_year(text: str, arxiv_id: str) -> int | None:
    if re.fullmatch(r"\d{4}\.\d{4,5}", arxiv_id):
        return 2000 + int(arxiv_id[:2])
    match = _YEAR_CONTEXT.search(text)
    return int(match.group(2)) if match else None


def find_abstract(first_page_text: str, max_words: int = 400) -> str:
    """The text after an 'Abstract' heading, up to the first section heading."""
    lines = first_page_text.split("\n")
    for index, line in enumerate(lines):
        head = _ABSTRACT_HEAD.match(line)
        if not head:
            continue
        body: list[str] = [line[head.end() :]]
        for following in lines[index + 1 :]:
            if _SECTION_HEAD.match(following):
                break
            body.append(following)
        words = _join_lines(body).split()
        return " ".join(words[:max_words])
    return ""


def clean_info(info: dict[str, Any]) -> dict[str, str]:
    """The Info dictionary's text fields without control characters, each cut to a sane length."""
    cleaned: dict[str, str] = {}
    for key, value in (info or {}).items():
        if isinstance(value, str):
            cleaned[key] = " ".join(_CONTROL.sub(" ", value[:MAX_INFO_CHARS]).split())
    return cleaned


def _shown(value: str, page_folded: str) -> bool:
    """Whether ``value`` is printed on the page, ignoring case, accents, spacing and punctuation
    (a text layer that spaced out "No v el insights" still shows "Novel insights")."""
    folded = _fold(value)
    return len(folded) >= 4 and folded in page_folded


def _fold(text: str) -> str:
    ascii_text = ascii_fold(text)
    return re.sub(r"[^a-z0-9]", "", ascii_text.lower())


def extract_metadata(
    info: dict[str, Any], page_dict: dict[str, Any], page_height: float, first_pages_text: str, first_page_text: str,
    xmp_packet: str | None = None, first_page_links: Sequence[str] = (),
) -> DocumentMeta:
    """Every source the PDF carries, best first, each field with its origin; empty where there is none.

    XMP (when what it says is printed on the page), the Info dictionary (when plausible and shown),
    a repository cover sheet, the first page's layout and printed lines, then identifiers.
    """
    info = clean_info(info)
    xmp = read_xmp(xmp_packet)
    lines = [line for line in first_page_text.split("\n") if line.strip()]
    page_folded = _fold(first_page_text)
    origins: dict[str, str] = {}
    cover = printed.cover_fields(lines) if printed.is_cover_sheet(first_page_text) else {}

    title, title_block = _title(info, xmp, page_dict, page_height, first_page_text, page_folded, cover, origins)
    layout_text, _ = layout_title(page_dict, page_height)
    printed_authors = (layout_authors(page_dict, title_block, page_height, layout_text)
                       if title_block >= 0 and not cover else ())
    if not printed_authors and title and _fold(layout_text).startswith(_fold(title)) and len(layout_text) > len(title):
        # The author line was set in the title's type and read as part of it: the names are what follows.
        printed_authors = metadata_authors(layout_text[len(title):])
    authors = _authors(info, xmp, printed_authors, first_page_text, page_folded, origins)

    # The paper's own identifiers: arXiv's side stamp first, then the info dictionary, then the
    # first page up to any reference list (an id cited there belongs to another paper).
    own = (f"{rotated_text(page_dict)}\n{info.get('subject') or ''}\n{info.get('keywords') or ''}\n"
           f"{before_references(first_page_text)}")
    arxiv_id = find_arxiv_id(own)
    doi = printed.clean_doi(xmp.doi) or printed.clean_doi(cover.get("DOI", "")) or find_doi(own)
    if doi:
        origins["doi"] = "xmp" if xmp.doi and doi == printed.clean_doi(xmp.doi) else "page"
    elif doi := crossmark_doi(first_page_links):
        origins["doi"] = "crossmark"
    year = _year(xmp, lines, arxiv_id, doi, cover, origins)
    venue = _venue(info, xmp, lines, page_folded, cover, origins)
    if arxiv_id:
        origins["arxiv_id"] = "page"
    bib = Bibliography(title=title, authors=authors, year=year, doi=doi, arxiv_id=arxiv_id, venue=venue)
    return DocumentMeta(bib=bib, abstract=find_abstract(first_page_text), origins=tuple(sorted(origins.items())))


def _title(info: dict[str, str], xmp: XmpFields, page_dict: dict[str, Any], page_height: float, page_text: str,
           page_folded: str, cover: dict[str, str], origins: dict[str, str]) -> tuple[str, int]:
    printed_title, title_block = layout_title(page_dict, page_height)
    info_title = info.get("title", "")
    title, origin = printed_title, "page"
    if cover.get("Title"):
        title, origin = cover["Title"], "cover"
    elif _plausible_title(xmp.title) and _shown(xmp.title, page_folded):
        title, origin = xmp.title, "xmp"  # publishers' packets hold the title as typed, not as set
    else:
        # The info dictionary's title is clean text, but only trusted when the page shows it.
        shown = (printed_title and _norm(info_title) == _norm(printed_title)) or (
            not printed_title and _norm(info_title) in _norm(page_text))
        if _plausible_title(info_title) and shown:
            title, origin = info_title, "info"
    if title and not _plausible_title(title) and len(title.split()) < 2:
        title = ""
    title = " ".join(title.split())[:MAX_TITLE_CHARS]
    title = printed.caps_title_recased(title, page_text)
    if title:
        origins["title"] = origin
    return title, title_block


def _authors(info: dict[str, str], xmp: XmpFields, printed_authors: tuple[str, ...], page_text: str,
             page_folded: str, origins: dict[str, str]) -> tuple[str, ...]:
    # Publishers' XMP writes creators given name first (or "Family, Given"); only the hand-typed
    # Info field is turned round.
    listed: list[str] = []
    for creator in xmp.creators:  # some packets put the whole list in one item, as well or instead
        listed.extend(metadata_authors(creator) if creator.count(",") >= 2 else [creator])
    creators = list(dict.fromkeys(names.split_name(n).display() if "," in n else n
                                  for n in listed if looks_like_name(n) or "," in n))
    if len(creators) >= 2 and _shown(names.family_name(creators[0]), page_folded):
        origins["authors"] = "xmp"
        return tuple(names.clean_name(name) for name in creators)
    info_authors = names.orient(metadata_authors(info.get("author", "")), page_text)
    chosen = choose_authors(info_authors, printed_authors)
    if chosen:
        origins["authors"] = "page" if chosen == printed_authors else "info"
        return tuple(names.clean_name(name) for name in chosen)
    # A lone XMP creator is often the uploader, so it is used only when nothing else names anyone.
    lone = [name for name in xmp.creators if len(name.split()) >= 2 and _shown(name, page_folded)]
    if lone:
        origins["authors"] = "xmp"
        return (name_case(lone[0].title() if lone[0].islower() else lone[0]),)
    return ()


def _year(xmp: XmpFields, lines: list[str], arxiv_id: str, doi: str, cover: dict[str, str],
          origins: dict[str, str]) -> int | None:
    candidates = [
        ("xmp", xmp.year),
        ("cover", printed.year_from_text([f"published {cover['Publication Date']}"])
         if cover.get("Publication Date") else None),
        ("page", printed.year_from_text(lines)),
        ("arxiv", 2000 + int(arxiv_id[:2]) if re.fullmatch(r"\d{4}\.\d{4,5}", arxiv_id) else None),
        ("doi", printed.year_from_doi(doi)),
    ]
    for origin, year in candidates:
        if year:
            origins["year"] = origin
            return year
    return None


def _venue(info: dict[str, str], xmp: XmpFields, lines: list[str], page_folded: str, cover: dict[str, str],
           origins: dict[str, str]) -> str:
    subject = re.split(r",|\s\d|\bdoi\b", info.get("subject", ""), maxsplit=1)[0].strip()
    # Publishers' subject fields often hold the article's type or section ("Research Article",
    # "Microbial Ecology"), which the page prints only as a capitals kicker above the title.
    section = any(" ".join(line.split()) == subject.upper() for line in lines) and not subject.isupper()
    candidates = [
        ("cover", re.sub(r",?\s*\d+(\(\d+\))?$", "", cover.get("Journal", ""))),
        ("xmp", xmp.publication if _shown(xmp.publication, page_folded) else ""),  # templates leave stale names
        ("page", printed.venue_from_lines(lines)),
        ("info", subject if re.fullmatch(r"[A-Z][\w&.: ]+", subject) and _shown(subject, page_folded)
         and not section else ""),
    ]
    for origin, venue in candidates:
        if venue:
            origins["venue"] = origin
            return _venue_case(" ".join(venue.split()), lines)
    return ""


def _venue_case(venue: str, lines: list[str]) -> str:
    """A journal name a footer sets in capitals ("NATURE COMMUNICATIONS"), as it is cited; a word
    the page prints in capitals elsewhere too (an acronym such as "JCAP" or "EMBO") stays so."""
    if len(venue.split()) < 2 or not printed.mostly_capitals(venue):
        return venue
    elsewhere = " ".join(line for line in lines if venue not in line)
    return printed.titlecase_caps(venue, set(re.findall(r"\b[A-Z][A-Z0-9]+\b", elsewhere)))


def before_references(text: str) -> str:
    """``text`` up to a line that opens a reference list ("References", "References: [1] ...")."""
    match = _REFERENCES_LINE.search(text)
    return text[: match.start()] if match else text
