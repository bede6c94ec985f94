"""Bibliographic metadata from the PDF's info dictionary and its first page.

Each field comes from evidence in the file: the info dictionary when it is plausible, the
first page's layout (the largest type near the top is the title), and DOI / arXiv patterns in
the text. A field with no evidence stays empty; nothing is guessed from the file name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.ingest.layout import clean_word

_DOI = re.compile(r"\b(10\.\d{4,9}/[-._;()/:A-Za-z0-9]+[A-Za-z0-9])")
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
_NAME_TOKEN = re.compile(r"^[A-Z][A-Za-z'’\-.]*$|^[A-Z]\.$")
_PARTICLES = frozenset(
    {"van", "von", "de", "der", "den", "da", "del", "della", "di", "du", "la", "le", "bin", "al", "dos", "y"}
)
_NOT_NAME_WORDS = frozenset(
    [
        "university",
        "institute",
        "institution",
        "laboratory",
        "laboratories",
        "lab",
        "labs",
        "college",
        "school",
        "department",
        "dept",
        "center",
        "centre",
        "research",
        "inc",
        "corp",
        "corporation",
        "company",
        "association",
        "foundation",
        "technology",
        "sciences",
        "science",
        "engineering",
        "abstract",
        "introduction",
        "google",
        "microsoft",
        "facebook",
        "amazon",
        "ibm",
        "allen",
        "ai",
        "usa",
        "uk",
        "carnegie",
        "mellon",
        "national",
        "academy",
        "hospital",
        "group",
        "faculty",
        "computer",
        "proceedings",
        "conference",
    ]
)
_REFERENCES_LINE = re.compile(r"^\s*((\d+|[IVX]+)\.?\s*)?(references|bibliography)\s*(:|$)", re.I | re.M)
_GLUED_INITIAL = re.compile(r"\b([A-Z][a-z]?\.)(?=[A-Z])")
_ABSTRACT_HEAD = re.compile(r"^\s*abstract\b[\s.:—–-]*", re.I)
_SECTION_HEAD = re.compile(
    r"^\s*((\d+|[IVX]+)\.?\s+)?(introduction|keywords|index terms|background|ccs concepts)\b", re.I
)


@dataclass(frozen=True)
class DocumentMeta:
    title: str = ""
    authors: tuple[str, ...] = ()
    year: int | None = None
    doi: str = ""
    arxiv_id: str = ""
    abstract: str = ""


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def _plausible_title(title: str) -> bool:
    title = title.strip()
    return len(title.split()) >= 2 and len(title) <= 300 and not _BAD_TITLES.search(title)


def layout_title(page_dict: dict[str, Any], page_height: float) -> tuple[str, int]:
    """The largest-type text in the top half of the first page, and the block index it ends in."""
    candidates: list[tuple[float, int, str]] = []
    for block_index, block in enumerate(page_dict.get("blocks", [])):
        for line in block.get("lines", []):
            if tuple(round(v) for v in line.get("dir", (1, 0))) != (1, 0):
                continue  # rotated side stamps
            if line["bbox"][1] > page_height * 0.5:
                continue
            text = "".join(span["text"] for span in line["spans"]).strip()
            if sum(ch.isalpha() for ch in text) < 2:
                continue
            size = max(span["size"] for span in line["spans"] if span["text"].strip())
            candidates.append((round(size * 2) / 2, block_index, text))
    if not candidates:
        return "", -1
    # Sizes shared by at least 2 letters-words; the biggest wins, its lines joined in order.
    top_size = max(size for size, _, text in candidates if len(text.split()) >= 1)
    body_sizes = sorted(size for size, _, _ in candidates)
    if top_size <= body_sizes[len(body_sizes) // 2]:
        return "", -1  # no line is larger than ordinary text: no printed title to find
    lines = [(block, text) for size, block, text in candidates if size == top_size]
    first_block = lines[0][0]
    kept = [text for block, text in lines if block - first_block <= 2]
    last_block = max(block for block, _ in lines if block - first_block <= 2)
    title = _join_lines(kept)
    if len(title.split()) > 40:
        return "", -1
    return title, last_block


def _join_lines(lines: list[str]) -> str:
    out = ""
    for line in lines:
        line = " ".join(clean_word(word) for word in line.split())
        out = out[:-1] + line if out.endswith("-") and line[:1].islower() else f"{out} {line}".strip()
    return out


def _split_names(text: str) -> list[str]:
    text = re.sub(r"[*†‡§¶∗♠♣♦♥⋆]|\d|\(.*?\)", " ", text)
    chunks = re.split(r",|;|\band\b|&|\s{3,}", text)
    return [" ".join(chunk.split()) for chunk in chunks if chunk.strip()]


def looks_like_name(name: str) -> bool:
    tokens = name.split()
    if not 2 <= len(tokens) <= 5 or "@" in name:
        return False
    if any(token.lower().strip(".,") in _NOT_NAME_WORDS for token in tokens):
        return False
    named = [t for t in tokens if t.lower() not in _PARTICLES]
    return len(named) >= 2 and all(_NAME_TOKEN.match(t) for t in named)


def metadata_authors(raw: str) -> tuple[str, ...]:
    names = [n for n in _split_names(raw) if looks_like_name(n)]
    return tuple(dict.fromkeys(names))


def layout_authors(page_dict: dict[str, Any], after_block: int, page_height: float) -> tuple[str, ...]:
    """Person names in the blocks just below the title, stopping at the abstract.

    Names are read in the type of the first name found: affiliations set in another font or
    size (ACM's "NAME, University, Country") are skipped, and superscript markers (†, α, 1)
    separate the names they are glued to.
    """
    names: list[str] = []
    style: tuple[str, float] | None = None
    wrapped = ""  # "Edward Van" at the end of a line: the surname starts the next one
    for block in page_dict.get("blocks", [])[after_block + 1 : after_block + 30]:
        for line in block.get("lines", []):
            if line["bbox"][1] > page_height * 0.45:
                return tuple(dict.fromkeys(names))
            if _ABSTRACT_HEAD.match("".join(span["text"] for span in line["spans"])):
                return tuple(dict.fromkeys(names))
            spans = [span for span in line["spans"] if span["text"]]
            chunks = _split_names(_author_text(spans, style))
            if wrapped and chunks and looks_like_name(f"{wrapped} {chunks[0]}"):
                chunks[0] = f"{wrapped} {chunks[0]}"
            last_words = chunks[-1].split() if chunks else []
            wrapped = chunks[-1] if len(last_words) >= 2 and last_words[-1].lower() in _PARTICLES else ""
            found = [chunk for chunk in chunks if looks_like_name(chunk)]
            if found and style is None:
                first_word = found[0].split()[0]
                style = next((_span_style(span) for span in spans if first_word in span["text"]),
                             _span_style(spans[0]))
            names.extend(_name_case(name) for name in found)
    return tuple(dict.fromkeys(names))


def _span_style(span: dict[str, Any]) -> tuple[str, float]:
    return span.get("font", ""), round(span["size"] * 2) / 2


def _author_text(spans: list[dict[str, Any]], style: tuple[str, float] | None) -> str:
    """A line's text with markers, wide gaps and (once known) other type turned into separators."""
    main_size = max((span["size"] for span in spans if span["text"].strip()), default=0.0)
    parts: list[str] = []
    for span in spans:
        text = span["text"]
        x0, _, x1, _ = span["bbox"]
        if not text.strip():
            # A space wider than half an em sits between two names set apart ("Ruifang Ge   Raymond Mooney").
            parts.append(", " if x1 - x0 > 0.5 * span["size"] else text)
        elif span.get("flags", 0) & 1 or span["size"] < 0.85 * main_size:
            parts.append(", ")  # superscript affiliation or footnote marker
        elif style is not None and _span_style(span) != style:
            parts.append(", ")
        else:
            parts.append(text)
    # "Yu.A.Pusep" -> "Yu. A. Pusep": initials glued to the name that follows.
    return _GLUED_INITIAL.sub(r"\1 ", "".join(parts))


def _name_case(name: str) -> str:
    """Names set in small capitals come out upper case; give them ordinary capitals."""
    return name.title() if name.isupper() else name


def rotated_text(page_dict: dict[str, Any]) -> str:
    """Text set at an angle, such as arXiv's side stamp; layout drops it from the page's lines."""
    return "\n".join("".join(span["text"] for span in line["spans"])
                     for block in page_dict.get("blocks", []) for line in block.get("lines", [])
                     if tuple(round(v) for v in line.get("dir", (1, 0))) != (1, 0))


def choose_authors(info_authors: tuple[str, ...], printed: tuple[str, ...]) -> tuple[str, ...]:
    """The names printed under the title when they confirm the info dictionary's, else the info's.

    Info dictionaries are typed by hand: often abbreviated ("Daniel Weld" for "Daniel S. Weld"),
    misspelt or cut short (the uploader alone). The page is what readers cite, but it is trusted
    over the info dictionary only when it finds as many names and agrees on most surnames.
    """
    if not info_authors or not printed:
        return info_authors or printed
    printed_surnames = {_norm(name.split()[-1]) for name in printed}
    agreeing = sum(_norm(name.split()[-1]) in printed_surnames for name in info_authors)
    return printed if len(printed) >= len(info_authors) and 2 * agreeing >= len(info_authors) else info_authors


def find_doi(text: str) -> str:
    match = _DOI.search(text)
    return match.group(1).rstrip(".") if match else ""


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


def extract_metadata(
    info: dict[str, Any], page_dict: dict[str, Any], page_height: float, first_pages_text: str, first_page_text: str
) -> DocumentMeta:
    """Combine the info dictionary with first-page evidence; empty where there is none."""
    printed_title, title_block = layout_title(page_dict, page_height)
    info_title = " ".join((info.get("title") or "").split())
    title = printed_title
    # The info dictionary's title is clean text, but only trusted when the page shows it.
    shown = (printed_title and _norm(info_title) == _norm(printed_title)) or (
        not printed_title and _norm(info_title) in _norm(first_page_text))
    if _plausible_title(info_title) and shown:
        title = info_title
    if title and not _plausible_title(title) and len(title.split()) < 2:
        title = ""
    printed_authors = layout_authors(page_dict, title_block, page_height) if title_block >= 0 else ()
    authors = choose_authors(metadata_authors(info.get("author") or ""), printed_authors)
    # The paper's own identifiers: arXiv's side stamp first, then the info dictionary, then the
    # first page up to any reference list (an id cited there belongs to another paper).
    own = (f"{rotated_text(page_dict)}\n{info.get('subject') or ''}\n{info.get('keywords') or ''}\n"
           f"{before_references(first_page_text)}")
    arxiv_id = find_arxiv_id(own)
    return DocumentMeta(
        title=title,
        authors=authors,
        year=find_year(f"{own}\n{first_pages_text}", arxiv_id),
        doi=find_doi(own),
        arxiv_id=arxiv_id,
        abstract=find_abstract(first_page_text),
    )


def before_references(text: str) -> str:
    """``text`` up to a line that opens a reference list ("References", "References: [1] ...")."""
    match = _REFERENCES_LINE.search(text)
    return text[: match.start()] if match else text
