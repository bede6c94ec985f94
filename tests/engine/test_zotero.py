"""Zotero import on a zotero.sqlite built here with Zotero's own tables: PDFs with Zotero's metadata and
collections, the trash and notes skipped, missing files reported, the database never written (even
while "Zotero" holds its exclusive lock), and a re-import that only refreshes what changed."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest
from fixtures.zotero_db import Zotero, make_pdf

from engine import zotero as zotero_module
from engine.cli.main import main
from engine.errors import EngineError
from engine.service import Engine
from engine.zotero import ZoteroError, read_zotero

REPO = Path(__file__).resolve().parents[2]

SPECTER = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"


@pytest.fixture
def zotero(tmp_path: Path) -> Zotero:
    z = Zotero(tmp_path / "Zotero")
    specter = z.item("journalArticle", "SPEC0001", {"title": SPECTER, "date": "2020-07-00 July 2020",
                                                   "DOI": "10.18653/v1/2020.acl-main.207"},
                     [("Arman", "Cohan", 1), ("Sergey", "Feldman", 1), ("Jane", "Editor", 2)])
    z.attach(specter, "ATT00001", "storage:Cohan - 2020 - SPECTER.pdf")
    make_pdf(z.folder / "storage" / "ATT00001" / "Cohan - 2020 - SPECTER.pdf", "specter")
    linked = z.item("conferencePaper", "LINK0001", {"title": "Construction of the Literature Graph",
                                                    "date": "2018"}, [("", "Allen Institute for AI", 1)])
    outside = make_pdf(z.folder.parent / "elsewhere" / "graph.pdf", "graph")
    z.attach(linked, "ATT00002", str(outside), link_mode=2)
    trashed = z.item("journalArticle", "TRSH0001", {"title": "A paper in the trash"})
    z.attach(trashed, "ATT00003", "storage:trash.pdf")
    make_pdf(z.folder / "storage" / "ATT00003" / "trash.pdf", "trash")
    z.db.execute("INSERT INTO deletedItems(itemID) VALUES (?)", (trashed,))
    missing = z.item("journalArticle", "MISS0001", {"title": "Only in the cloud"})
    z.attach(missing, "ATT00004", "storage:cloud.pdf")  # not downloaded: no file in storage/
    z.item("note", "NOTE0001", {})
    z.attach(None, "ATT00005", "storage:loose.pdf", title="A standalone PDF")
    make_pdf(z.folder / "storage" / "ATT00005" / "loose.pdf", "loose")
    thesis = z.collect("Thesis", [specter])
    z.collect("Related work", [specter, linked], parent=thesis)
    z.close()
    return z


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_read_finds_pdfs_with_metadata_skipping_trash_and_notes(zotero: Zotero) -> None:
    items = {item.title: item for item in read_zotero(zotero.folder)}
    assert set(items) == {SPECTER, "Construction of the Literature Graph", "Only in the cloud", "A standalone PDF"}
    specter = items[SPECTER]
    assert specter.authors == ("Arman Cohan", "Sergey Feldman") and specter.year == 2020  # editors are not authors
    assert specter.doi == "10.18653/v1/2020.acl-main.207"
    assert specter.collections == ("Thesis", "Thesis › Related work")
    assert items["Construction of the Literature Graph"].authors == ("Allen Institute for AI",)
    assert items["Only in the cloud"].pdf is None and "not on this computer" in items["Only in the cloud"].problem


def test_import_uses_zotero_metadata_and_never_writes_the_database(engine: Engine, zotero: Zotero) -> None:
    database = zotero.folder / "zotero.sqlite"
    before = _digest(database)
    running = sqlite3.connect(database)  # Zotero running: it holds an exclusive lock on its database
    running.execute("PRAGMA locking_mode=EXCLUSIVE")
    running.execute("BEGIN EXCLUSIVE")
    try:
        report = engine.import_zotero(zotero.folder)
    finally:
        running.rollback()
        running.close()
    assert (report.added, report.updated, report.unchanged) == (3, 0, 0)
    assert [reason for _, reason in report.failed] == [next(i.problem for i in read_zotero(zotero.folder)
                                                            if i.title == "Only in the cloud")]
    assert _digest(database) == before
    assert sorted(p.name for p in zotero.folder.iterdir()) == ["storage", "zotero.sqlite"]  # no -wal, no -journal

    documents = {document.bib.title: document for document in engine.documents()}
    assert set(documents) == {SPECTER, "Construction of the Literature Graph", "A standalone PDF"}
    specter = documents[SPECTER]  # Zotero's title, not the PDF's "Untitled draft"
    assert specter.bib.authors == ("Arman Cohan", "Sergey Feldman") and specter.bib.year == 2020
    assert specter.bib.doi == "10.18653/v1/2020.acl-main.207"
    assert engine.collections(specter.id) == ["Thesis", "Thesis › Related work"]
    assert engine.passages(specter.id)[0].title == SPECTER  # what search and answers see


def test_reimport_skips_unchanged_items_and_refreshes_changed_ones(engine: Engine, zotero: Zotero) -> None:
    engine.import_zotero(zotero.folder)
    again = engine.import_zotero(zotero.folder)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 3)

    db = sqlite3.connect(zotero.folder / "zotero.sqlite")  # the user fixes a title in Zotero
    db.execute("INSERT INTO itemDataValues(value) VALUES ('SPECTER (corrected)')")
    value_id = db.execute("SELECT valueID FROM itemDataValues WHERE value='SPECTER (corrected)'").fetchone()[0]
    item_id = db.execute("SELECT itemID FROM items WHERE key='SPEC0001'").fetchone()[0]
    db.execute("UPDATE itemData SET valueID=? WHERE itemID=? AND fieldID=1", (value_id, item_id))
    db.execute("UPDATE items SET dateModified='2024-03-01 09:00:00' WHERE itemID=?", (item_id,))
    db.commit()
    db.close()
    third = engine.import_zotero(zotero.folder)
    assert (third.added, third.updated, third.unchanged) == (0, 1, 2)
    assert "SPECTER (corrected)" in {document.bib.title for document in engine.documents()}
    assert len(engine.documents()) == 3


def test_a_folder_without_zotero_sqlite_is_refused_clearly(engine: Engine, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(EngineError, match="not a Zotero data folder"):
        engine.import_zotero(tmp_path)
    assert main(["--home", str(tmp_path / "h"), "zotero", "import", str(tmp_path)]) == 1
    assert "zotero.sqlite" in capsys.readouterr().err


def test_cli_imports_and_edits(zotero: Zotero, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = str(tmp_path / "cli-home")
    assert main(["--home", home, "zotero", "import", str(zotero.folder)]) == 0
    assert "3 added, 0 updated, 0 unchanged, 1 could not be added" in capsys.readouterr().out
    with Engine(home) as engine:
        loose = next(d for d in engine.documents() if d.bib.title == "A standalone PDF")
    assert main(["--home", home, "edit", loose.id[:8], "--title", "Loose notes on retrieval", "--authors",
                 "Ada Lovelace; Alan Turing", "--year", "1950", "--doi", "https://doi.org/10.1000/xyz",
                 "--venue", " Mind "]) == 0
    assert "Mind" in capsys.readouterr().out
    with Engine(home) as engine:
        edited = engine.document(loose.id)
    assert (edited.bib.title, edited.bib.authors, edited.bib.year, edited.bib.doi, edited.bib.venue) == (
        "Loose notes on retrieval", ("Ada Lovelace", "Alan Turing"), 1950, "10.1000/xyz", "Mind")
    assert main(["--home", home, "edit", loose.id[:8], "--year", "soon"]) == 1
    assert "Year" in capsys.readouterr().err


def test_an_item_whose_doi_is_not_a_doi_is_added_without_it_and_named(engine: Engine, tmp_path: Path) -> None:
    z = Zotero(tmp_path / "Zotero")
    odd = z.item("journalArticle", "ODDD0001", {"title": "A paper whose DOI is n/a", "DOI": "n/a", "date": "20x"})
    z.attach(odd, "ATT00011", "storage:odd.pdf")
    make_pdf(z.folder / "storage" / "ATT00011" / "odd.pdf", "odd")
    fine = z.item("journalArticle", "FINE0001", {"title": "A paper with a real DOI", "DOI": "10.1000/xyz123"})
    z.attach(fine, "ATT00012", "storage:fine.pdf")
    make_pdf(z.folder / "storage" / "ATT00012" / "fine.pdf", "fine")
    z.close()

    report = engine.import_zotero(z.folder)

    assert report.added == 2 and not report.failed
    assert report.notes == [("A paper whose DOI is n/a",
                             "added without its doi: DOI: 'n/a' does not look like a DOI (10.1234/…); fix it or "
                             "leave it empty.")]
    by_title = {d.bib.title: d for d in engine.documents()}
    assert by_title["A paper whose DOI is n/a"].bib.doi in ("", None)  # the rest of its metadata is kept
    assert by_title["A paper with a real DOI"].bib.doi == "10.1000/xyz123"


def endless_item_data(database: Path) -> None:
    """``itemData`` replaced by a view over a recursive CTE that never ends (as a hostile file could hold)."""
    db = sqlite3.connect(database)
    db.executescript("""
        DROP TABLE itemData;
        CREATE VIEW itemData(itemID, fieldID, valueID) AS
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i, 1, 1 FROM n;
    """)
    db.close()


def test_a_zotero_database_with_a_view_where_a_table_belongs_is_refused_at_once(zotero: Zotero) -> None:
    endless_item_data(zotero.folder / "zotero.sqlite")
    code = ("import sys; from pathlib import Path; from engine.zotero import read_zotero, ZoteroError\n"
            "try:\n    read_zotero(Path(sys.argv[1]))\nexcept ZoteroError as exc:\n    print(exc); sys.exit(3)\n")
    # A subprocess with a deadline: before, this read never ended and ignored Ctrl-C.
    done = subprocess.run([sys.executable, "-c", code, str(zotero.folder)], capture_output=True, text=True,
                          timeout=60, check=False, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 3, done.stderr
    assert "itemData is a view" in done.stdout and "was not read" in done.stdout


def test_every_query_on_a_zotero_database_is_bounded(zotero: Zotero, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zotero_module, "READ_SECONDS", 0.0)  # any query now runs past its bound
    monkeypatch.setattr(zotero_module, "_PROGRESS_STEPS", 1)  # and the clock is looked at every step
    with pytest.raises(ZoteroError, match="took longer than 0 s"):
        read_zotero(zotero.folder)


def test_collections_forming_a_cycle_give_each_name_once(engine: Engine, tmp_path: Path) -> None:
    z = Zotero(tmp_path / "Zotero")
    paper = z.item("journalArticle", "CYCL0001", {"title": "A paper filed in a loop"})
    z.attach(paper, "ATTCYCL1", "storage:loop.pdf")
    make_pdf(z.folder / "storage" / "ATTCYCL1" / "loop.pdf", "loop")
    first = z.collect("Alpha", [paper])
    second = z.collect("Beta", [], parent=first)
    z.db.execute("UPDATE collections SET parentCollectionID=? WHERE collectionID=?", (second, first))  # a loop
    z.close()
    (item,) = read_zotero(z.folder)
    assert item.collections == ("Beta › Alpha",)
    engine.import_zotero(z.folder)
    (document,) = engine.documents()
    assert document.collections == ("Beta › Alpha",)


def test_collection_names_holding_html_are_kept_as_text(engine: Engine, tmp_path: Path) -> None:
    z = Zotero(tmp_path / "Zotero")
    paper = z.item("journalArticle", "HTML0001", {"title": "A paper"})
    z.attach(paper, "ATTHTML1", "storage:html.pdf")
    make_pdf(z.folder / "storage" / "ATTHTML1" / "html.pdf", "html")
    z.collect("<b>Bold</b> & <script>alert(1)</script>", [paper])
    z.close()
    engine.import_zotero(z.folder)
    (document,) = engine.documents()
    assert document.collections == ("<b>Bold</b> & <script>alert(1)</script>",)  # escaping is the UI's job


def test_a_supplement_pdf_is_titled_apart_from_its_paper(engine: Engine, tmp_path: Path) -> None:
    z = Zotero(tmp_path / "Zotero")
    paper = z.item("journalArticle", "SUPP0001", {"title": SPECTER})
    z.attach(paper, "ATTMAIN1", "storage:specter.pdf")
    z.attach(paper, "ATTSUPP1", "storage:specter-supplement.pdf", title="Supplementary Material")
    z.attach(paper, "ATTSUPP2", "storage:slides.pdf", title="Full Text PDF")
    for key, name in (("ATTMAIN1", "specter.pdf"), ("ATTSUPP1", "specter-supplement.pdf"), ("ATTSUPP2", "slides.pdf")):
        make_pdf(z.folder / "storage" / key / name, name)
    z.close()
    engine.import_zotero(z.folder)
    titles = sorted(document.bib.title for document in engine.documents())
    assert titles == [SPECTER, f"{SPECTER} — Supplementary Material", f"{SPECTER} — slides"]


def _titled_pdf(path: Path, title: str) -> Path:
    """A PDF whose first page prints ``title`` in large type over a body, as a paper does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 80), title, fontsize=18)
    page.insert_text((72, 130), [f"Body line {n} about protein folding in cells." for n in range(30)], fontsize=10)
    document.save(path)
    document.close()
    return path


def test_a_standalone_pdf_titled_with_its_file_name_keeps_its_printed_title(engine: Engine, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    z = Zotero(tmp_path / "Zotero")
    z.attach(None, "ATTLOOS1", "storage:standalone.pdf", title="standalone.pdf")
    z.attach(None, "ATTLOOS2", "storage:other-notes.pdf", title="other-notes")
    _titled_pdf(z.folder / "storage" / "ATTLOOS1" / "standalone.pdf", "Chaperones Guide Protein Folding")
    _titled_pdf(z.folder / "storage" / "ATTLOOS2" / "other-notes.pdf", "Ribosomes Read Messenger RNA")
    z.close()
    assert [item.title for item in read_zotero(z.folder)] == ["", ""]
    engine.import_zotero(z.folder)
    titles = sorted(document.bib.title for document in engine.documents())
    assert titles == ["Chaperones Guide Protein Folding", "Ribosomes Read Messenger RNA"]
    assert zotero_module.is_file_name("standalone.pdf", "storage:standalone.pdf")
    assert not zotero_module.is_file_name("A standalone PDF", "storage:loose.pdf")


def test_an_import_into_papers_already_present_says_merged_not_added(engine: Engine, zotero: Zotero,
                                                                     tmp_path: Path) -> None:
    folder = tmp_path / "folder-copy"
    folder.mkdir()
    for source in (zotero.folder / "storage" / "ATT00001" / "Cohan - 2020 - SPECTER.pdf",
                   zotero.folder.parent / "elsewhere" / "graph.pdf"):
        (folder / source.name).write_bytes(source.read_bytes())
    list(engine.add_documents([folder]))
    assert len(engine.documents()) == 2
    report = engine.import_zotero(zotero.folder)
    assert (report.added, report.merged, report.updated, report.unchanged) == (1, 2, 0, 0)
    assert len(engine.documents()) == 3  # grew by the one new paper the report names as added
    assert report.summary().startswith("Zotero: 1 added, 2 merged into papers already here, 0 updated")
    assert engine.import_zotero(zotero.folder).merged == 0  # the next import finds them unchanged


def test_the_same_pdf_in_two_items_is_one_paper_reported_as_such(engine: Engine, tmp_path: Path) -> None:
    z = Zotero(tmp_path / "Zotero")
    first = z.item("journalArticle", "DUPE0001", {"title": SPECTER, "date": "2020"}, [("Arman", "Cohan", 1)])
    second = z.item("journalArticle", "DUPE0002", {"title": "SPECTER (a second copy)", "date": "2021"})
    z.attach(first, "ATTDUPE1", "storage:specter.pdf")
    z.attach(second, "ATTDUPE2", "storage:specter copy.pdf")
    make_pdf(z.folder / "storage" / "ATTDUPE1" / "specter.pdf", "specter")
    (z.folder / "storage" / "ATTDUPE2").mkdir(parents=True)
    (z.folder / "storage" / "ATTDUPE2" / "specter copy.pdf").write_bytes(
        (z.folder / "storage" / "ATTDUPE1" / "specter.pdf").read_bytes())
    z.collect("Reading", [first])
    z.collect("Teaching", [second])
    z.close()
    report = engine.import_zotero(z.folder)
    assert (report.added, report.merged) == (1, 1)
    [(item, note)] = report.notes
    assert item == "SPECTER (a second copy)" and f"the same PDF as “{SPECTER}”" in note
    [document] = engine.documents()
    assert document.bib.title == SPECTER and document.bib.year == 2020  # the first item's details
    assert engine.collections(document.id) == ["Reading", "Teaching"]
    again = engine.import_zotero(z.folder)
    assert (again.added, again.merged, again.unchanged, again.notes) == (0, 0, 2, [])
    assert engine.collections(document.id) == ["Reading", "Teaching"]
