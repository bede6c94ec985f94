"""BibTeX, RIS and CSL-JSON exports: parsed back by pybtex and bibtexparser, checked field by field."""

from __future__ import annotations

import json
from pathlib import Path

import bibtexparser
import pytest
from pybtex.database import parse_string

from engine.bibliography import Bibliography
from engine.render.bibtex import works_to_bibtex
from engine.render.ris import works_to_csl, works_to_ris

SHARED = Path(__file__).resolve().parents[3] / "shared"


def paper(title: str, authors: tuple[str, ...], year: int | None = 2024, doi: str = "", venue: str = "",
          arxiv_id: str = "", url: str = "") -> Bibliography:
    return Bibliography(title, authors=authors, year=year, doi=doi, arxiv_id=arxiv_id, url=url, venue=venue)


NAR = paper("CRISPR antiphage defence & 50% of x_y", ("Sabine Grüschow", "Madeleine van Zuylen"),
            doi="10.1093/nar/gkae_167", venue="Nucleic Acids Research", url="https://example.org/a_b?c=1%20")
ACL = paper("SPECTER: Document-level Representation Learning", ("Arman Cohan",), 2020,
            venue="Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics")
ARXIV = paper("Multi-LexSum", ("Zejiang Shen",), 2022, arxiv_id="2206.10883")


def test_entry_types_fields_and_verbatim_identifiers() -> None:
    text = works_to_bibtex([NAR, ACL, ARXIV])
    entries = parse_string(text, "bibtex").entries
    nar, acl, arxiv = entries.values()
    assert (nar.type, acl.type, arxiv.type) == ("article", "inproceedings", "misc")
    assert nar.fields["journal"] == "Nucleic Acids Research" and "booktitle" in acl.fields
    assert nar.fields["doi"] == "10.1093/nar/gkae_167" and nar.fields["url"] == "https://example.org/a_b?c=1%20"
    assert arxiv.fields["eprint"] == "2206.10883" and arxiv.fields["archivePrefix"] == "arXiv"
    assert nar.fields["title"] == r"{CRISPR} antiphage defence \& 50\% of x\_y"
    assert acl.fields["title"].startswith("{SPECTER}: {Document-level} {Representation}")
    assert [str(p) for p in nar.persons["author"]] == ["Grüschow, Sabine", "van Zuylen, Madeleine"]
    assert list(entries) == ["gruschow2024crispr", "cohan2020specter", "shen2022multi"]


def test_ris_and_csl_carry_the_same_values() -> None:
    ris = works_to_ris([NAR, ACL])
    assert ris.split("\n\n")[0].split("\n") == [
        "TY  - JOUR", "TI  - CRISPR antiphage defence & 50% of x_y", "AU  - Grüschow, Sabine",
        "AU  - van Zuylen, Madeleine", "PY  - 2024", "JO  - Nucleic Acids Research", "DO  - 10.1093/nar/gkae_167",
        "UR  - https://example.org/a_b?c=1%20", "ER  - "]
    assert "TY  - CPAPER" in ris and "T2  - Proceedings of the 58th" in ris
    nar, acl = works_to_csl([NAR, ACL])
    assert nar == {"id": "gruschow2024crispr", "type": "article-journal", "title": NAR.title,
                   "author": [{"family": "Grüschow", "given": "Sabine"},
                              {"family": "van Zuylen", "given": "Madeleine"}],
                   "issued": {"date-parts": [[2024]]}, "container-title": "Nucleic Acids Research",
                   "DOI": "10.1093/nar/gkae_167", "URL": "https://example.org/a_b?c=1%20"}
    assert acl["type"] == "paper-conference" and json.dumps([nar, acl], ensure_ascii=False)


def _library() -> list[Bibliography]:
    from engine.ingest.pipeline import IngestOptions, PdfParse

    folders = [SHARED / "corpus" / "papers", SHARED / "eval" / "litqa2-dev" / "pdfs"]
    pdfs = sorted(p for folder in folders for p in folder.glob("*.pdf"))
    if len(pdfs) < 66:
        pytest.skip("the shared corpus and LitQA2 PDFs are not here")
    works = []
    for path in pdfs:
        with PdfParse(path, IngestOptions(ocr=False, parse_workers=0)) as parse:
            works.append(parse.meta.bib)
    return works


@pytest.mark.slow
def test_the_whole_66_paper_library_exports_bibtex_both_parsers_read_back_unchanged() -> None:
    works = _library()
    text = works_to_bibtex(works)
    by_pybtex = parse_string(text, "bibtex").entries
    by_bibtexparser = bibtexparser.loads(text).entries
    assert len(by_pybtex) == len(by_bibtexparser) == len(works)  # keys unique: nothing merged or dropped
    for work, (key, entry) in zip(works, by_pybtex.items(), strict=True):
        other = next(e for e in by_bibtexparser if e["ID"] == key)
        assert entry.fields.get("year", "") == other.get("year", "") == (str(work.year) if work.year else "")
        assert entry.fields.get("doi", "") == other.get("doi", "") == work.doi
        names = [str(p) for p in entry.persons.get("author", [])]
        assert len(names) == len(work.authors)
        unbraced = entry.fields["title"].replace("{", "").replace("}", "").replace("\\", "")
        assert unbraced == " ".join((work.title or "Untitled").split())
