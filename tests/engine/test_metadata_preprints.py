"""Preprint and journal first pages whose title, byline or venue used to be misread.

Hand-built pages (``test_metadata``'s helpers) reproduce each layout; the real PDFs, where the
shared LitQA2 set is present, are checked against the hand-written truth of
``tests/data/metadata_truth.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS
from test_metadata import BODY, HEIGHT, line, page

from engine.bibliography import Bibliography
from engine.ingest.byline import layout_authors
from engine.ingest.metadata import extract_metadata, layout_title
from engine.ingest.printed import venue_from_lines
from engine.render.bibtex import works_to_bibtex
from engine.render.common import byline
from engine.render.ris import works_to_csl, works_to_ris

BOLD = "Times-Bold"


def spn_e_page() -> dict[str, Any]:
    """bioRxiv, typed in a word processor: the title in bold at the body's size, numbered affiliations."""
    return page(
        [line(103, ("The dual role of Spn-E in supporting heterotypic ping-pong piRNA amplification", 11.3, 16, BOLD))],
        [line(128, ("in silkworms", 11.3, 16, BOLD))],
        [line(202, ("Natsuko Izumi", 11.3), ("1,", 7.4, 1), ("†, Keisuke Shoji", 11.3), ("1,2,3,", 7.4, 1),
              ("†, Lumi Negishi", 11.3), ("4", 7.4, 1), (", and Yukihide Tomari", 11.3), ("1,2*", 7.4, 1))],
        [line(252, ("1", 7.4), (" Laboratory of RNA Function, Institute for Quantitative Biosciences, The", 11.3)),
         line(280, ("Tokyo, Bunkyo-ku, Tokyo 113-0032, Japan.", 11.3))],
        [line(303, ("2", 7.4), (" Department of Computational Biology, Graduate School of", 11.3))],
        [line(331, ("Frontier Sciences, The University of Tokyo, Bunkyo-ku, Tokyo", 11.3))],
        [line(600 + 12 * i, (f"Body text of the preprint on line {i}.", 11.3)) for i in range(12)],
    )


def test_a_bold_title_at_the_body_size_is_the_title_and_its_byline_is_read() -> None:
    first = spn_e_page()
    title, block = layout_title(first, HEIGHT)
    assert title == "The dual role of Spn-E in supporting heterotypic ping-pong piRNA amplification in silkworms"
    assert layout_authors(first, block, HEIGHT, title) == (
        "Natsuko Izumi", "Keisuke Shoji", "Lumi Negishi", "Yukihide Tomari")
    meta = extract_metadata({"title": "", "author": ""}, first, HEIGHT, "", "")
    assert meta.bib.title.startswith("The dual role of Spn-E") and meta.bib.authors[0] == "Natsuko Izumi"


def test_a_bold_label_is_no_title() -> None:
    first = page([line(60, ("Research Article", 10.0, 16, BOLD))], [line(90, ("Plain opening words here.", 10.0))],
                 BODY)
    assert layout_title(first, HEIGHT) == ("", -1)


def test_numbered_affiliations_end_the_byline() -> None:
    # SH3 preprint: "1. Département ..., Avenue de la Médecine, Québec" was read as three people.
    first = page(
        [line(73, ("Residues Neighboring an SH3-Binding Motif", 26.0))],
        [line(190, ("David F. Jordan", 11.0), ("1,2,3,4,", 7.0, 1), ("*, Alexandre K. Dubé", 11.0), ("1,2", 7.0, 1),
              (" and ", 11.0)),
         line(204, ("Christian R. Landry ", 11.0), ("1,2,*", 7.0, 1)),
         line(250, ("1. Département de Biochimie, Université Laval, 1030, Avenue", 11.0)),
         line(264, ("de la Médecine, Québec, QC, Canada, G1V 0A6", 11.0)),
         line(279, ("2. Institut de Biologie Intégrative, Université Laval, Québec", 11.0))],
        BODY,
    )
    assert layout_authors(first, 0, HEIGHT) == ("David F. Jordan", "Alexandre K. Dubé", "Christian R. Landry")


def test_a_marker_after_the_last_name_and_a_name_broken_after_its_given_name() -> None:
    first = page(
        [line(72, ("Enhancing affinity of neutralizing nanobody", 14.0))],
        [line(112, ("Vishakha Singh, Ana Dias, Connor", 12.0)),
         line(140, ("Clairmont", 12.0), ("1,4", 7.0, 1), (", Shailly Tomar*. ", 12.0))],
        BODY,
    )
    assert layout_authors(first, 0, HEIGHT) == ("Vishakha Singh", "Ana Dias", "Connor Clairmont", "Shailly Tomar")


def test_a_byline_stored_after_the_abstract_below_it_is_read_top_to_bottom() -> None:
    # MBoC: the abstract block comes before the byline in the file, though it is printed beneath it.
    def block(*lines: dict[str, Any]) -> dict[str, Any]:
        top = min(one["bbox"][1] for one in lines)
        return {"bbox": (50.0, top, 500.0, top + 10), "lines": list(lines)}

    first = {"blocks": [
        block(line(128, ("Label-free proteomic comparison reveals ciliary", 18.0))),
        block(line(254, ("ABSTRACT DIFFRAC is a powerful method for comparing proteomes", 9.0))),
        block(line(182, ("Janelle C. Leggere", 9.0), ("a", 5.9, 1), (", Chad G. Pearson", 9.0), ("b", 5.9, 1))),
        block(line(193, ("Edward M. Marcotte", 9.0), ("a", 5.9, 1), (", and John B. Wallingford", 9.0))),
        *({"bbox": (50.0, 400.0 + 12 * i, 500.0, 410.0 + 12 * i), "lines": [one]} for i, one in enumerate(BODY)),
    ]}
    title, last = layout_title(first, HEIGHT)
    assert layout_authors(first, last, HEIGHT, title) == (
        "Janelle C. Leggere", "Chad G. Pearson", "Edward M. Marcotte", "John B. Wallingford")


def test_a_section_kicker_is_no_venue_and_a_capitals_journal_is_cited_in_title_case() -> None:
    first = page([line(60, ("CsrA-Controlled Proteins Reveal New Dimensions", 18.0))], BODY)
    text = "RESEARCH ARTICLE\nCsrA-Controlled Proteins Reveal New Dimensions\nBody."
    assert extract_metadata({"subject": "Research Article"}, first, HEIGHT, text, text).bib.venue == ""
    text = "MICROBIAL ECOLOGY\nEvidence for Widespread Class II Microcins\nBody."
    assert extract_metadata({"subject": "Microbial Ecology"}, first, HEIGHT, text, text).bib.venue == ""
    text = "ARTICLE\nNATURE COMMUNICATIONS | (2022) 13:2882 | https://doi.org/10.1038/x | www.nature.com"
    assert extract_metadata({}, first, HEIGHT, text, text).bib.venue == "Nature Communications"
    text = "JCAP EMBO DNA\nEMBO REPORTS | (2024) 25:1 | https://doi.org/10.1038/y"
    assert extract_metadata({}, first, HEIGHT, text, text).bib.venue == "EMBO Reports"  # an acronym stays


def test_a_proceedings_header_wrapped_before_its_date_is_read_whole() -> None:
    lines = ["In Proceedings of the 2023 CHI Conference on Human Factors in Computing",
             "Systems (CHI ’23), April 23–28, 2023, Hamburg, Germany. ACM, New York,"]
    assert venue_from_lines(lines) == "Proceedings of the 2023 CHI Conference on Human Factors in Computing Systems"


def test_a_group_author_is_one_braced_author_in_every_export() -> None:
    work = Bibliography(title="Surfactants in use", authors=("Procter and Gamble Research Group", "Arman Cohan"),
                        year=2001)
    bibtex = works_to_bibtex([work])
    assert 'author = "{Procter and Gamble Research Group} and Cohan, Arman"' in bibtex
    assert "@misc{procter2001surfactants," in bibtex
    assert "AU  - Procter and Gamble Research Group" in works_to_ris([work])
    assert works_to_csl([work])[0]["author"] == [{"literal": "Procter and Gamble Research Group"},
                                                 {"family": "Cohan", "given": "Arman"}]
    assert byline(work.authors, work.year) == "Procter and Gamble Research Group and Cohan 2001"


TRUTH = Path(__file__).resolve().parents[1] / "data" / "metadata_truth.json"
NAMED = ("10.1101%2F2023.12.19.572360.pdf", "10.1091%2Fmbc.E23-03-0084.pdf", "10.1101%2F2024.05.13.593833.pdf",
         "10.1101%2F2024.05.13.593936.pdf", "10.1128%2Fjb.00479-21.pdf", "10.1128%2Faem.01486-22.pdf",
         "10.1038%2Fs41467-022-30570-7.pdf")


@pytest.mark.parametrize("name", NAMED)
def test_the_named_papers_read_as_their_first_page_prints_them(name: str) -> None:
    from engine.ingest.pipeline import IngestOptions, PdfParse
    from engine.render.common import surname

    folder = CORPUS.parent / "eval" / "litqa2-dev" / "pdfs"
    if not (folder / name).is_file():
        pytest.skip(f"the LitQA2 PDFs are not here ({folder}); set QUIRE_TEST_CORPUS")
    truth = next(paper for paper in json.loads(TRUTH.read_text(encoding="utf-8"))["papers"] if paper["file"] == name)
    with PdfParse(folder / name, IngestOptions(ocr=False, parse_workers=0)) as parse:
        bib = parse.meta.bib
    assert " ".join(bib.title.split()) == truth["title"]
    if "authors_family" in truth:
        assert [surname(author) for author in bib.authors] == truth["authors_family"]
    assert bib.venue in (truth["venue"] or [""])


@pytest.mark.parametrize(("lines", "venue"), [
    (["A Study of Markets", "Electronic copy available at: https://ssrn.com/abstract=4312345"], "SSRN"),
    (["Posted Date: March 3rd, 2023", "DOI: https://doi.org/10.21203/rs.3.rs-2663480/v1"], "Research Square"),
    (["bioRxiv preprint doi: https://doi.org/10.1101/2024.05.13.593833; this version posted May 24, 2024."],
     "bioRxiv"),
    (["medRxiv preprint doi: https://doi.org/10.1101/2021.01.01.21249999; this version posted"], "medRxiv"),
    (["See https://ssrn.com/abstract=1 for the data."], ""),  # a cited address is no stamp
])
def test_preprint_servers_are_named_from_their_stamps(lines: list[str], venue: str) -> None:
    assert venue_from_lines(lines) == venue
