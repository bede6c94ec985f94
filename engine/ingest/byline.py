"""Who wrote the paper: person names read from the byline under the title, or from a typed list.

A byline is read in the type of its first name: affiliations set in another font or size are
skipped, superscript markers separate the names they are glued to, and the numbered list of
affiliations that follows a preprint's byline ends it.
"""

from __future__ import annotations

import re
from typing import Any

from engine.ingest import names
from engine.text.characters import ascii_fold

# A capitalised word of letters in any script ("Grüschow", "Coté"), or "uz-Zaman"'s particle form.
_NAME_TOKEN = re.compile(r"^(?=[^\W\d_])[^\W\d_][\w'’\-.]*$")
_PARTICLES = names.PARTICLES | {"y"}
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
_AFFILIATION_WORDS = re.compile(
    r"\b(depart|universi|institu|laborator|school|college|cent(er|re)\b|hospital|facult|address|contributed|"
    r"corresponding|division|program|group|academy|inc\b|ltd\b)")
_GLUED_INITIAL = re.compile(r"\b([A-Z][a-z]?\.)(?=[A-Z])")
_ABSTRACT_HEAD = re.compile(r"^\s*abstract\b[\s.:—–-]*", re.I)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def _split_names(text: str) -> list[str]:
    text = re.sub(r"[*†‡§¶∗♠♣♦♥⋆#✉]|\d|\(.*?\)|,\s*Ph\.?D\.?\b", " ", text)
    chunks = re.split(r",|;|\band\b|&|\s{3,}", text)
    # A marker taken out of "Tomar*." leaves its full stop alone: it is no part of the name.
    words = [[word for word in chunk.split() if any(ch.isalnum() for ch in word)] for chunk in chunks]
    return [" ".join(chunk) for chunk in words if chunk]


def looks_like_name(name: str) -> bool:
    tokens = name.split()
    if not 2 <= len(tokens) <= 5 or "@" in name:
        return False
    if any(token.lower().strip(".,") in _NOT_NAME_WORDS for token in tokens):
        return False
    named = [t for t in tokens if t.lower() not in _PARTICLES and not re.match(r"^[a-z]{1,3}-[A-Z]", t)]
    return len(named) >= 2 and all(_NAME_TOKEN.match(t) and t[0].isupper() for t in named)


def metadata_authors(raw: str) -> tuple[str, ...]:
    names = [n for n in _split_names(raw) if looks_like_name(n)]
    return tuple(dict.fromkeys(names))


def layout_authors(page_dict: dict[str, Any], after_block: int, page_height: float,
                   title: str = "") -> tuple[str, ...]:
    """Person names in the blocks just below the title, stopping at the abstract.

    Names are read in the type of the first name found: affiliations set in another font or
    size (ACM's "NAME, University, Country") are skipped, and superscript markers (†, α, 1)
    separate the names they are glued to.
    """
    title_key = _norm(title)
    # The title's own block is read too when the title is known: some layouts put the byline in it.
    first = after_block if title_key else after_block + 1
    blocks = list(enumerate(page_dict.get("blocks", [])[first : after_block + 30], start=first))
    found = _byline(blocks, after_block, page_height, title_key)
    if not found:
        # Some journals (MBoC) store the byline after the abstract set beneath it: read top to bottom.
        blocks.sort(key=lambda item: (item[0] != after_block, _block_top(item[1])))
        found = _byline(blocks, after_block, page_height, title_key)
    return found


def _byline(blocks: list[tuple[int, dict[str, Any]]], after_block: int, page_height: float,
            title_key: str) -> tuple[str, ...]:
    names: list[str] = []
    style: tuple[str, float] | None = None
    wrapped = ""  # "Edward Van" at the end of a line: the surname starts the next one
    for block_index, block in blocks:
        block_lines = block.get("lines", [])
        if block_index == after_block:  # only what follows the title's last line (not a section label above it)
            keys = [_norm("".join(span["text"] for span in line["spans"])) for line in block_lines]
            in_title = [i for i, key in enumerate(keys) if key and key in title_key]
            block_lines = block_lines[in_title[-1] + 1:] if in_title else []
        for line in block_lines:
            if line["bbox"][1] > page_height * 0.45:
                return tuple(dict.fromkeys(names))
            if _ABSTRACT_HEAD.match("".join(span["text"] for span in line["spans"])):
                return tuple(dict.fromkeys(names))
            if names and _opens_affiliations(line):
                return tuple(dict.fromkeys(names))
            spans = [span for span in line["spans"] if span["text"]]
            text = _author_text(spans, style)
            chunks = _split_names(text)
            if wrapped and chunks and looks_like_name(f"{wrapped} {chunks[0]}"):
                chunks[0] = f"{wrapped} {chunks[0]}"
            last_words = chunks[-1].split() if chunks else []
            # A line that ends on a particle or on a lone given name ("..., Connor" / "Clairmont1,4, ...")
            # leaves the name to finish on the next line; a marker or comma after it would close it.
            open_end = bool(re.search(r"[^\W\d_]\s*$", text))
            wrapped = chunks[-1] if open_end and (
                (len(last_words) >= 2 and last_words[-1].lower() in _PARTICLES)
                or (len(last_words) == 1 and _NAME_TOKEN.match(last_words[0]) and last_words[0][0].isupper())) else ""
            if len(last_words) == 1 and wrapped:
                chunks = chunks[:-1]
            found = [chunk for chunk in chunks if looks_like_name(chunk)]
            if found and style is None:
                first_word = found[0].split()[0]
                style = next((_span_style(span) for span in spans if first_word in span["text"]),
                             _span_style(spans[0]))
            names.extend(name_case(name) for name in found)
    return tuple(dict.fromkeys(names))


def _block_top(block: dict[str, Any]) -> float:
    return float(block.get("bbox", (0, 0, 0, 0))[1])


def _opens_affiliations(line: dict[str, Any]) -> bool:
    """A line that starts the list under a byline: "1 Department of ...", "a University of ...",
    "# These authors contributed equally", "Affiliations". Comma-split, its places would read as
    names ("Avenue de la Médecine", "New York")."""
    spans = [span for span in line["spans"] if span["text"].strip()]
    if not spans:
        return False
    text = "".join(span["text"] for span in line["spans"]).strip()
    main_size = max(span["size"] for span in spans)
    first = spans[0]
    marked = (len(first["text"].strip()) <= 4 and len(spans) > 1
              and (first.get("flags", 0) & 1 or first["size"] < 0.85 * main_size)) \
        or bool(re.match(r"^((\d{1,2}|[a-z])[.)]|[*#†‡§])\s*[A-Z]", text))  # not "1 University Station"
    folded = ascii_fold(text).lower()
    if re.match(r"^(author )?affiliations?\b|^current address", folded):
        return True
    return marked and bool(_AFFILIATION_WORDS.search(folded))


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


def name_case(name: str) -> str:
    """Names set in small capitals come out upper case; give them ordinary capitals."""
    return name.title() if name.isupper() else name


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
