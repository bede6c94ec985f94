"""Bibliographic metadata on bad and awkward input: XMP, Info fields, capitals, cover sheets, names, DOIs.

Pages are PyMuPDF text dicts built by hand (see test_metadata); XMP packets are written here.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from engine.ingest import names, printed
from engine.ingest.metadata import clean_info, extract_metadata
from engine.ingest.xmp import MAX_XMP_BYTES, read_xmp

HEIGHT = 800.0

XMP = """<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:prism="http://prismstandard.org/namespaces/basic/2.0/">
<dc:title><rdf:Alt><rdf:li xml:lang="x-default">CRISPR antiphage defence mediated by Csx23</rdf:li></rdf:Alt></dc:title>
<dc:creator><rdf:Seq><rdf:li>Sabine Grüschow</rdf:li><rdf:li>Malcolm F White</rdf:li></rdf:Seq></dc:creator>
<prism:doi>10.1093/nar/gkae167</prism:doi><prism:publicationName>Nucleic Acids Research</prism:publicationName>
<prism:coverDate>2024-03-13</prism:coverDate></rdf:Description></rdf:RDF></x:xmpmeta>"""


def page(*lines: tuple[str, float]) -> dict[str, Any]:
    blocks = []
    y = 60.0
    for text, size in lines:
        span = {"text": text, "size": size, "flags": 0, "font": "Times", "bbox": (72, y, 72 + 5 * len(text), y + size)}
        blocks.append({"lines": [{"spans": [span], "bbox": span["bbox"], "dir": (1.0, 0.0)}]})
        y += size * 1.6
    return {"blocks": blocks}


def meta(info: dict[str, Any], lines: list[tuple[str, float]], xmp: str | None = None) -> Any:
    text = "\n".join(text for text, _ in lines)
    return extract_metadata(info, page(*lines), HEIGHT, text, text, xmp)


NAR_PAGE = [("Nucleic Acids Research, 2024, 52, 2761–2775", 8.0), ("https://doi.org/10.1093/nar/gkae167", 8.0),
            ("CRISPR antiphage defence mediated by Csx23", 18.0), ("Sabine Grüsc ho w 1 , Malcolm F. Whit e 1", 10.0),
            ("Abstract", 10.0), ("Body text of the abstract goes here and on.", 10.0),
            ("More body text of ordinary size for the median.", 10.0)]


def test_xmp_fields_win_and_each_field_names_its_origin() -> None:
    found = meta({"author": "Grschow Sabine, White Malcolm F"}, NAR_PAGE, XMP)
    assert found.bib.title == "CRISPR antiphage defence mediated by Csx23"
    assert found.bib.authors == ("Sabine Grüschow", "Malcolm F White")
    assert (found.bib.doi, found.bib.year, found.bib.venue) == ("10.1093/nar/gkae167", 2024, "Nucleic Acids Research")
    assert dict(found.origins)["authors"] == "xmp" and dict(found.origins)["doi"] == "xmp"


def test_info_authors_written_family_first_are_turned_round() -> None:
    found = meta({"author": "Grschow Sabine, White Malcolm F."}, NAR_PAGE)
    assert names.family_name(found.bib.authors[0]) in ("Grüschow", "Grschow")
    assert found.bib.authors[0].startswith("Sabine")


def test_malformed_xmp_is_ignored_with_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert read_xmp(XMP[: len(XMP) // 2]) == read_xmp(None)
    assert "malformed XMP" in caplog.text
    found = meta({}, NAR_PAGE, "<x:xmpmeta><rdf:RDF>")
    assert found.bib.title == "CRISPR antiphage defence mediated by Csx23"  # from the page instead


def test_huge_or_entity_laden_xmp_is_not_parsed(caplog: pytest.LogCaptureFixture) -> None:
    huge = XMP.replace("Csx23", "Csx23" + " padding" * (MAX_XMP_BYTES // 8 + 1))
    bomb = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><x>&b;</x>'
    with caplog.at_level(logging.WARNING):
        assert read_xmp(huge).title == "" and read_xmp(bomb).title == ""
    assert "ignored" in caplog.text


def test_info_fields_with_control_characters_or_huge_titles_are_cleaned_and_cut() -> None:
    cleaned = clean_info({"title": "A\x00 title\x07 with\x1b junk\ufeff", "author": "x" * 50_000, "n": 3})
    assert cleaned["title"] == "A title with junk" and len(cleaned["author"]) <= 1000 and "n" not in cleaned
    found = meta({"title": "Long " * 10_000}, NAR_PAGE)
    assert len(found.bib.title) <= 300 and "Long Long" not in found.bib.title


def test_a_title_in_capitals_is_cased_with_its_acronyms_kept() -> None:
    lines = [("ULTRA LIGHT BOSONIC DARK MATTER AND THE CMB IN QUANTUM HALL LAYERS", 16.0),
             ("Ivan Rodriguez, Tonatiuh Matos", 10.0), ("The CMB spectrum is measured; the CMB peaks shift.", 10.0),
             ("Ordinary body text in lower case for the median size.", 10.0)]
    found = meta({}, lines)
    assert found.bib.title == "Ultra Light Bosonic Dark Matter and the CMB in Quantum Hall Layers"
    assert printed.titlecase_caps("DNA REPAIR IN E. COLI", {"DNA"}) == "DNA Repair in E. Coli"


def test_a_cover_sheet_is_read_for_its_labels_not_as_the_paper() -> None:
    lines = [("UC San Diego", 20.0), ("UC San Diego Previously Published Works", 12.0), ("Title", 10.0),
             ("Single-nucleotide variants within heart enhancers", 10.0), ("Permalink", 10.0),
             ("https://escholarship.org/uc/item/3zn9x6fh", 10.0), ("Journal", 10.0),
             ("Developmental Cell, 58(21)", 10.0), ("Publication Date", 10.0), ("2023-11-01", 10.0),
             ("DOI", 10.0), ("10.1016/j.devcel.2023.09.005", 10.0),
             ("Downloaded from escholarship.org on June 25, 2025", 10.0)]
    found = meta({}, lines).bib
    assert found.title == "Single-nucleotide variants within heart enhancers"
    assert (found.venue, found.year, found.doi) == ("Developmental Cell", 2023, "10.1016/j.devcel.2023.09.005")


def test_years_of_downloads_are_never_the_papers() -> None:
    assert printed.year_from_text(["Downloaded from https://academic.oup.com on 25 June 2025",
                                   "Received 31 August 2022", "Published 17 November 2022"]) == 2022
    assert printed.year_from_text(["Proceedings of NAACL-HLT 2018, pages 84–91", "c 2017 Association"]) == 2018
    assert printed.year_from_doi("10.1101/2023.12.19.572360") == 2023


@pytest.mark.parametrize(("text", "doi"), [
    ("doi: 10.1000/xyz123.", "10.1000/xyz123"),
    ("(see https://doi.org/10.1038/s41467-022-30570-7).", "10.1038/s41467-022-30570-7"),
    ("https://doi.org/10.7554/eLife.91357,", "10.7554/eLife.91357"),
    ("http://dx.doi.org/10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-0 ",
     "10.1002/(SICI)1097-4571(199806)49:8"),
    ("at http://www.rnajournal.org/cgi/doi/10.1261/rna.034181.112.", "10.1261/rna.034181.112"),
])
def test_dois_are_cut_from_urls_and_trailing_punctuation(text: str, doi: str) -> None:
    assert printed.clean_doi(text) == doi


@pytest.mark.parametrize(("written", "given", "family"), [
    ("Arman Cohan", "Arman", "Cohan"),
    ("Cohan, Arman", "Arman", "Cohan"),
    ("Madeleine van Zuylen", "Madeleine", "van Zuylen"),
    ("Ludwig von der Heide", "Ludwig", "von der Heide"),
    ("Rodríguez Montoya, Iván", "Iván", "Rodríguez Montoya"),
    ("Frederick Gmitter Jr.", "Frederick", "Gmitter"),
    ("Md. Hassan uz-Zaman", "Md. Hassan", "uz-Zaman"),
    ("Gabriela Casanova-Sepúlveda", "Gabriela", "Casanova-Sepúlveda"),
    ("王 小明", "王", "小明"),
])
def test_names_are_split_with_particles_hyphens_and_other_scripts(written: str, given: str, family: str) -> None:
    assert names.split_name(written) == (given, family)


def test_names_are_nfc_and_family_first_forms_are_oriented() -> None:
    decomposed = "Sabine Gru\u0308schow"
    assert names.clean_name(decomposed) == "Sabine Grüschow"
    assert names.orient(["Averill Jameson R.", "Adams Myfanwy C."], "") == ("Jameson R. Averill", "Myfanwy C. Adams")
    assert names.orient(["Sonmez Ceylan"], "Ceylan Sonmez 1 , Beatrice Toia") == ("Ceylan Sonmez",)
    assert names.orient(["Ceylan Sonmez"], "Ceylan Sonmez 1") == ("Ceylan Sonmez",)
    assert names.PersonName("Iván", "Rodríguez Montoya").display() == "Rodríguez Montoya, Iván"
