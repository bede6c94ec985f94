"""Metadata helpers on small golden inputs: identifiers, years, names, abstracts, the printed title.

First pages are given as PyMuPDF text dicts built by hand: blocks of lines of spans, each span
with its text, size, font, flags (1 = superscript) and box.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.bibliography import Bibliography
from engine.ingest.byline import choose_authors, layout_authors, looks_like_name, metadata_authors
from engine.ingest.metadata import (
    before_references,
    crossmark_doi,
    extract_metadata,
    find_abstract,
    find_arxiv_id,
    find_doi,
    find_year,
    layout_title,
    rotated_text,
)

HEIGHT = 800.0
Span = tuple[str, float] | tuple[str, float, int] | tuple[str, float, int, str]


def line(y: float, *spans: Span, x: float = 100.0, direction: tuple[float, float] = (1.0, 0.0)) -> dict[str, Any]:
    """A text-dict line at height ``y``: spans of (text, size[, flags[, font]]), 0.5 em per character."""
    out = []
    for text, size, *rest in spans:
        flags = rest[0] if rest else 0
        font = rest[1] if len(rest) > 1 else "Times-Roman"
        width = 0.5 * size * len(text)
        out.append({"text": text, "size": size, "flags": flags, "font": font, "bbox": (x, y, x + width, y + size)})
        x += width
    return {"bbox": (out[0]["bbox"][0], y, x, y + max(s[1] for s in spans)), "dir": direction, "spans": out}


def page(*blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"blocks": [{"lines": lines} for lines in blocks]}


BODY = [line(250 + 12 * i, (f"Ordinary body text on line {i} of the page.", 10.0)) for i in range(12)]


def acl_first_page() -> dict[str, Any]:
    return page(
        [line(70, ("SPECTER: Document-level Representation Learning using", 14.3, 16, "Times-Bold")),
         line(86, ("Citation-informed Transformers", 14.3, 16, "Times-Bold"))],
        [line(120, ("Arman Cohan", 12.0), ("†∗", 8.0, 1), x=80),
         line(120, ("Sergey Feldman", 12.0), ("†∗", 8.0, 1), x=200),
         line(120, ("Daniel S. Weld", 12.0), ("†,‡", 8.0, 1), x=330)],
        [line(142, ("†Allen Institute for Artificial Intelligence", 12.0))],
        [line(176, ("{armanc,sergey,danw}@allenai.org", 12.0))],
        [line(225, ("Abstract", 12.0, 16, "Times-Bold"))],
        BODY,
    )


# --- identifiers and years ------------------------------------------------------------------


@pytest.mark.parametrize(("text", "doi"), [
    ("https://doi.org/10.1145/3544548.3580847", "10.1145/3544548.3580847"),
    ("doi:10.1088/1475-7516/2008/10/003 and more", "10.1088/1475-7516/2008/10/003"),
    ("DOI 10.18653/v1/2020.acl-main.207.", "10.18653/v1/2020.acl-main.207"),
    ("ISBN 978-1-4503-9421-5/23/04", ""),
    ("no identifier at all", ""),
])
def test_find_doi(text: str, doi: str) -> None:
    assert find_doi(text) == doi


@pytest.mark.parametrize(("text", "arxiv_id"), [
    ("arXiv:2203.00130v1 [cs.HC] 28 Feb 2022", "2203.00130"),
    ("arXiv: 0908.0054v1 [astro-ph.CO]", "0908.0054"),
    ("ARXIV:1501.00001", "1501.00001"),
    ("arXiv:hep-th/9901001v2", "hep-th/9901001"),
    ("arXiv:math.GT/0309136", "math.GT/0309136"),
    ("see 2203.00130 without the prefix", ""),
])
def test_find_arxiv_id(text: str, arxiv_id: str) -> None:
    assert find_arxiv_id(text) == arxiv_id


@pytest.mark.parametrize(("text", "arxiv_id", "year"), [
    ("", "2203.00130", 2022),  # a new-style arXiv id says when it was submitted
    ("", "0908.0054", 2009),
    ("July 5 - 10, 2020. c\u20dd2020 Association for Computational Linguistics", "", 2020),  # TeX's \\copyright
    ("Proceedings of NAACL-HLT 2018, pages 84–91", "", 2018),
    ("© 2023 Copyright held by the owner/author(s).", "", 2023),
    ("Received 25 July 2008\nAccepted 8 September 2008", "", 2008),
    ("To appear in OSDI 2004", "", None),  # a year with no publication context is not taken
    ("We used 1990 examples in 2019 experiments.", "", None),
])
def test_find_year(text: str, arxiv_id: str, year: int | None) -> None:
    assert find_year(text, arxiv_id) == year


def test_identifiers_come_from_the_paper_not_its_reference_list() -> None:
    text = "A one-page abstract.\nReferences: [1] A. B. Author, doi:10.1103/PhysRevB.65.115323 arXiv:1910.13461"
    assert before_references(text) == "A one-page abstract.\n"
    meta = extract_metadata({}, page([line(60, ("A Title In Large Type", 14.0))], BODY), HEIGHT, text, text)
    assert meta.bib.doi == "" and meta.bib.arxiv_id == ""


def test_a_crossmark_link_gives_the_doi_the_page_does_not_print() -> None:
    links = ("mailto:someone@example.org", "https://doi.org/10.1038/other.paper",  # a cited paper's link
             "http://crossmark.crossref.org/dialog/?doi=10.1126%2Fscience.abp9563&domain=pdf&date_stamp=2023-04-13")
    first = page([line(60, ("A Title In Large Type", 14.0))], BODY)
    assert crossmark_doi(links) == "10.1126/science.abp9563"
    assert crossmark_doi(links[:2]) == "" and crossmark_doi(("http://crossmark.crossref.org/dialog/?x=1",)) == ""
    meta = extract_metadata({}, first, HEIGHT, "", "", None, links)
    assert meta.bib.doi == "10.1126/science.abp9563" and dict(meta.origins)["doi"] == "crossmark"
    printed_doi = extract_metadata({}, first, HEIGHT, "doi:10.1000/xyz123", "doi:10.1000/xyz123", None, links)
    assert printed_doi.bib.doi == "10.1000/xyz123"  # what the page prints comes first


def test_arxiv_stamp_wins_over_ids_cited_on_the_page() -> None:
    stamp = [line(400, ("arXiv:2206.10883v3  [cs.CL]  22 Jul 2022", 20.0), x=10, direction=(0.0, -1.0))]
    first = page([line(60, ("Multi-LexSum: Real-World Summaries", 17.0))], stamp, BODY)
    assert rotated_text(first).startswith("arXiv:2206.10883v3")
    text = "Longformer (Beltagy et al., 2020, arXiv:2004.05150) is a model."
    meta = extract_metadata({}, first, HEIGHT, text, text)
    assert (meta.bib.arxiv_id, meta.bib.year) == ("2206.10883", 2022)


# --- names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "is_name"), [
    ("Arman Cohan", True), ("Daniel S. Weld", True), ("Madeleine van Zuylen", True), ("Hsu-Han Ooi", True),
    ("Emily Prud’hommeaux", True), ("Yu. A. Pusep", True),
    ("Allen Institute for AI", False), ("University of Washington", False), ("Carnegie Mellon University", False),
    ("Plato", False),  # one word
    ("josephc@allenai.org", False), ("Abstract Introduction", False),
    ("the quick brown fox", False),  # not capitalised
    ("Edward Van", False),  # a particle is not a surname
])
def test_looks_like_name(name: str, is_name: bool) -> None:
    assert looks_like_name(name) is is_name


@pytest.mark.parametrize(("raw", "names"), [
    ("Arman Cohan ; Sergey Feldman ; Iz Beltagy", ("Arman Cohan", "Sergey Feldman", "Iz Beltagy")),
    ("Doug Downey, Stefan Schoenmackers, and Oren Etzioni", ("Doug Downey", "Stefan Schoenmackers", "Oren Etzioni")),
    ("Krzysztof Bolejko1,2 and Lars Andersson3,4", ("Krzysztof Bolejko", "Lars Andersson")),
    ("Association for Computational Linguistics", ()),
    ("z", ()),
    ("Andreas Muller, Andreas Muller", ("Andreas Muller",)),
])
def test_metadata_authors(raw: str, names: tuple[str, ...]) -> None:
    assert metadata_authors(raw) == names


def test_layout_authors_split_on_superscript_markers() -> None:
    first = acl_first_page()
    _, block = layout_title(first, HEIGHT)
    assert layout_authors(first, block, HEIGHT) == ("Arman Cohan", "Sergey Feldman", "Daniel S. Weld")


def test_layout_authors_glued_markers_greek_letters_and_wide_gaps() -> None:
    first = page(
        [line(70, ("PaperMage: A Unified Toolkit", 14.3))],
        [line(107, ("Kyle Lo", 12.0), ("α∗", 8.0, 1), (" ", 12.0), ("Zejiang Shen", 12.0), ("α,τ", 8.0, 1))],
        [line(121, ("Ruifang Ge", 12.0), ("   ", 12.0), ("Raymond J. Mooney", 12.0))],  # names set apart
        BODY,
    )
    assert layout_authors(first, 0, HEIGHT) == ("Kyle Lo", "Zejiang Shen", "Ruifang Ge", "Raymond J. Mooney")


NAME_FONT, PLACE_FONT = "LinBiolinum", "Libertine"


def test_layout_authors_skip_affiliations_in_other_type() -> None:
    # ACM: "NAME, Affiliation, Country" with the name in another font; and smola10: place names
    # that look like person names ("Santa Clara", "Torrey Pines Road") in the affiliation type.
    first = page(
        [line(70, ("An Architecture for Parallel Topic Models", 17.9))],
        [line(118, ("TAL AUGUST,", 10.9, 0, NAME_FONT), (" University of Washington, USA", 9.0, 0, PLACE_FONT))],
        [line(130, ("Yahoo! Research, Santa Clara, CA, USA", 9.0, 0, PLACE_FONT))],
        [line(142, ("MARTI A. HEARST,", 10.9, 0, NAME_FONT), (" Torrey Pines Road, Berkeley", 9.0, 0, PLACE_FONT))],
        BODY,
    )
    assert layout_authors(first, 0, HEIGHT) == ("Tal August", "Marti A. Hearst")


def test_layout_authors_join_a_name_wrapped_after_a_particle_and_glued_initials() -> None:
    first = page(
        [line(72, ("INTERFERENCE OF SINGLE PHOTONS", 13.9))],
        [line(116, ("Yu.A.Pusep", 9.8), ("1*", 6.0, 1), (", Edward B. Flagg,", 9.8), ("2", 6.0, 1),
              (" Edward Van ", 9.8)),
         line(128, ("Keuren,", 9.8), ("3", 6.0, 1), (" and Glenn S. Solomon", 9.8))],
        BODY,
    )
    assert layout_authors(first, 0, HEIGHT) == ("Yu. A. Pusep", "Edward B. Flagg", "Edward Van Keuren",
                                                "Glenn S. Solomon")


def test_layout_authors_take_the_type_of_the_name_not_of_a_marker_before_it() -> None:
    first = page(
        [line(70, ("A Title In Large Type", 14.0))],
        [line(100, ("1", 7.0, 1, "Times-Roman"), ("Ada Lovelace", 12.0, 0, "Times-Bold"))],
        [line(112, ("Analytical Engine Society", 12.0, 0, "Times-Roman"))],
        [line(124, ("Charles Babbage", 12.0, 0, "Times-Bold"))],
        BODY,
    )
    assert layout_authors(first, 0, HEIGHT) == ("Ada Lovelace", "Charles Babbage")


def test_layout_authors_stop_at_the_abstract() -> None:
    first = page(
        [line(70, ("A Title In Large Type", 14.0))],
        [line(100, ("Ada Lovelace", 12.0))],
        [line(130, ("Abstract", 12.0))],
        [line(150, ("Charles Babbage", 12.0))],  # a name in the abstract is not an author
        BODY,
    )
    assert layout_authors(first, 0, HEIGHT) == ("Ada Lovelace",)


@pytest.mark.parametrize(("info", "printed", "chosen"), [
    # The page adds the middle initial the info dictionary left out.
    (("Arman Cohan", "Daniel Weld"), ("Arman Cohan", "Daniel S. Weld"), ("Arman Cohan", "Daniel S. Weld")),
    # The info dictionary holds the uploader only.
    (("Andreas Muller",), ("Andreas Muller", "Alex Ling"), ("Andreas Muller", "Alex Ling")),
    # The page found fewer names, or others: keep the info dictionary.
    (("Ada Lovelace", "Charles Babbage"), ("Ada Lovelace",), ("Ada Lovelace", "Charles Babbage")),
    (("Ada Lovelace", "Charles Babbage"), ("Santa Clara", "Torrey Pines"), ("Ada Lovelace", "Charles Babbage")),
    ((), ("Ada Lovelace",), ("Ada Lovelace",)),
    (("Ada Lovelace",), (), ("Ada Lovelace",)),
])
def test_choose_authors(info: tuple[str, ...], printed: tuple[str, ...], chosen: tuple[str, ...]) -> None:
    assert choose_authors(info, printed) == chosen


# --- title and abstract ---------------------------------------------------------------------


def test_layout_title_joins_the_largest_lines() -> None:
    title, block = layout_title(acl_first_page(), HEIGHT)
    assert title == "SPECTER: Document-level Representation Learning using Citation-informed Transformers"
    assert block == 0


def test_no_title_when_nothing_is_set_larger_than_the_text() -> None:
    # 1903.10676: a page of tables and discussion, every line in body type.
    assert layout_title(page(BODY), HEIGHT) == ("", -1)


def test_the_info_title_is_used_only_when_the_page_shows_it() -> None:
    first = page([line(70, ("Beyond Summarization:", 17.2)), line(90, ("Designing AI Support", 17.2))], BODY)
    shown = extract_metadata({"title": "Beyond Summarization:  Designing AI  Support"}, first, HEIGHT, "", "")
    assert shown.bib.title == "Beyond Summarization: Designing AI Support"
    other = extract_metadata({"title": "Proceedings of the 45th Annual Meeting"}, first, HEIGHT, "", "")
    assert other.bib.title == "Beyond Summarization: Designing AI Support"
    file_name = extract_metadata({"title": "acl07.dvi"}, page(BODY), HEIGHT, "", "")
    assert file_name.bib.title == ""  # never a file name, and no printed title to fall back on


def test_nothing_is_invented_for_an_empty_page() -> None:
    meta = extract_metadata({}, page(), HEIGHT, "", "")
    assert meta.bib == Bibliography()
    assert meta.abstract == ""


def test_find_abstract_runs_to_the_first_section() -> None:
    text = "Title\nAbstract\nWe present a new ap-\nproach to parsing.\nIt works.\n1 Introduction\nParsing is old."
    assert find_abstract(text) == "We present a new approach to parsing. It works."
    assert find_abstract("ABSTRACT: Short one.\nKeywords: a, b") == "Short one."
    assert find_abstract("No heading here.\n1 Introduction") == ""
    assert len(find_abstract("Abstract\n" + "word " * 1000).split()) == 400
