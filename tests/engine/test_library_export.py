"""`quire library export` and `quire ask --ris/--csl-json`: real files written by the CLI, read back by
a RIS reader written from the RIS specification's tag layout, by json, and by pybtex and
bibtexparser, field by field, with the values the user corrected (venue included)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import bibtexparser
import pytest
from fixtures.pdfs import paper_text, text_pdf
from fixtures.ris import read_ris
from pybtex.database import parse_string

from engine.cli.main import main
from engine.errors import EngineError
from engine.render.exports import FORMATS, export_documents
from engine.service import Engine


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A library of three papers with corrected metadata: a journal article, a proceedings paper, a bare one."""
    home = tmp_path / "home"
    with Engine(home=home) as engine:
        ids = []
        for topic in ("crispr arrays", "citation graphs", "sparse retrieval"):
            pdf = text_pdf(tmp_path / f"{topic.split()[0]}.pdf", [paper_text(topic)])
            ids.append(next(iter(engine.add_documents([pdf]))).doc_id)
        engine.update_metadata(ids[0], title="CRISPR arrays in {DNA} repair", authors=["Grüschow, Sabine",
                               "Malcolm F. White"], year=2024, doi="10.1093/nar/gkae_001",
                               venue="Nucleic Acids Research")
        engine.update_metadata(ids[1], title="SPECTER: Document-level Representation Learning",
                               authors=["Arman Cohan", "Madeleine van Zuylen"], year=2020,
                               venue="Proceedings of the 58th Annual Meeting of the ACL")
        engine.update_metadata(ids[2], title="Sparse retrieval", authors=[], year="")
    return home


def export(home: Path, tmp_path: Path, format_name: str, *ids: str) -> str:
    out = tmp_path / f"references{FORMATS[format_name][1]}"
    assert main(["--home", str(home), "library", "export", *ids, "--format", format_name, "-o", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def test_ris_export_reads_back_field_by_field(home: Path, tmp_path: Path) -> None:
    records = {record["TI"][0]: record for record in read_ris(export(home, tmp_path, "ris"))}
    assert len(records) == 3
    nar = records["CRISPR arrays in {DNA} repair"]
    assert nar["TY"] == ["JOUR"] and nar["JO"] == ["Nucleic Acids Research"]
    assert nar["AU"] == ["Grüschow, Sabine", "White, Malcolm F."]
    assert nar["PY"] == ["2024"] and nar["DO"] == ["10.1093/nar/gkae_001"]  # DOI verbatim, underscore kept
    acl = records["SPECTER: Document-level Representation Learning"]
    assert acl["TY"] == ["CPAPER"] and acl["T2"] == ["Proceedings of the 58th Annual Meeting of the ACL"]
    assert acl["AU"] == ["Cohan, Arman", "van Zuylen, Madeleine"]
    bare = records["Sparse retrieval"]
    assert "AU" not in bare and "PY" not in bare and "JO" not in bare


def test_csl_json_export_reads_back_field_by_field(home: Path, tmp_path: Path) -> None:
    items = {item["title"]: item for item in json.loads(export(home, tmp_path, "csl-json"))}
    nar = items["CRISPR arrays in {DNA} repair"]
    assert nar["type"] == "article-journal" and nar["container-title"] == "Nucleic Acids Research"
    assert nar["author"] == [{"family": "Grüschow", "given": "Sabine"}, {"family": "White", "given": "Malcolm F."}]
    assert nar["issued"] == {"date-parts": [[2024]]} and nar["DOI"] == "10.1093/nar/gkae_001"
    acl = items["SPECTER: Document-level Representation Learning"]
    assert acl["type"] == "paper-conference"
    assert acl["container-title"] == "Proceedings of the 58th Annual Meeting of the ACL"
    assert len({item["id"] for item in items.values()}) == 3  # ids unique, as BibTeX keys are


def test_bibtex_export_of_chosen_papers_parses_with_both_parsers(home: Path, tmp_path: Path) -> None:
    with Engine(home=home) as engine:
        chosen = [d.id[:8] for d in engine.documents() if d.bib.venue]
    text = export(home, tmp_path, "bibtex", *chosen)
    entries = parse_string(text, "bibtex").entries
    assert len(entries) == 2
    by_title = {entry.fields["title"]: entry for entry in entries.values()}
    nar = next(entry for title, entry in by_title.items() if "CRISPR" in title)
    assert nar.type == "article" and nar.fields["journal"] == "Nucleic Acids Research"
    assert nar.fields["doi"] == "10.1093/nar/gkae_001"
    acl = next(entry for title, entry in by_title.items() if "SPECTER" in title)
    assert acl.type == "inproceedings" and "Annual Meeting" in acl.fields["booktitle"]
    parsed = {entry["ID"]: entry for entry in bibtexparser.loads(text).entries}
    assert set(parsed) == set(entries)
    assert {entry["doi"] for entry in parsed.values() if "doi" in entry} == {"10.1093/nar/gkae_001"}


def test_library_show_names_the_venue(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Engine(home=home) as engine:
        doc_id = next(d.id for d in engine.documents() if d.bib.venue == "Nucleic Acids Research")
    assert main(["--home", str(home), "library", "show", doc_id[:8]]) == 0
    assert "venue: Nucleic Acids Research" in capsys.readouterr().out
    assert main(["--home", str(home), "library", "show", doc_id[:8], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["venue"] == "Nucleic Acids Research"


def test_printed_export_and_an_unknown_format(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--home", str(home), "library", "export", "--format", "ris"]) == 0
    assert len(read_ris(capsys.readouterr().out)) == 3
    with Engine(home=home) as engine, pytest.raises(EngineError, match="choose one of bibtex, ris, csl-json"):
        export_documents(engine.documents(), "endnote-xml")


def test_a_write_that_fails_leaves_the_old_file(home: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "refs.bib"
    out.write_text("previous export\n", encoding="utf-8")
    (tmp_path / f".refs.bib.{os.getpid()}.tmp").mkdir()  # the temporary file cannot be written
    assert main(["--home", str(home), "library", "export", "-o", str(out)]) == 1
    assert "Could not write" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "previous export\n"


def test_an_answers_references_carry_the_papers_venue(home: Path) -> None:
    from engine.embed.hashing import HashingEmbedder
    from engine.render.exports import export_answer
    from engine.request import AskRequest, RequestOptions

    with Engine(home=home) as engine:
        engine.embedder = HashingEmbedder()
        answer = engine.ask(AskRequest("How do retrieval systems cite their sources about crispr arrays?",
                                       mode="digest", options=RequestOptions(save=False)))
        venues = {paper.bib.title: paper.bib.venue for paper in answer.papers}
        assert venues.get("CRISPR arrays in {DNA} repair") == "Nucleic Acids Research", venues
        records = {record["TI"][0]: record for record in read_ris(export_answer(answer, "ris"))}
        assert records["CRISPR arrays in {DNA} repair"]["JO"] == ["Nucleic Acids Research"]
