"""Where a paper's metadata comes from, and which source wins: the PDF, a datastore record (only what the
PDF left empty), a Zotero import (over the PDF), the user's edit (over everything, across re-imports);
the venue stored and edited like the other fields; a catalog from before venues upgraded in place."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pymupdf
import pytest
from test_zotero import SPECTER, Zotero

from engine.service import Engine
from engine.store import Library
from engine.store.edits import MetadataError
from engine.store.schema import MIGRATIONS, SCHEMA_VERSION, current_version, ensure_schema

DOI = "10.5555/quire.fill.2021"


def bare_pdf(path: Path, lines: list[str]) -> Path:
    """A one-page PDF with a big title line and small body lines: no year, no byline a reader could find."""
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 80), "Sparse Retrieval Without Labels", fontsize=20)
    page.insert_text((72, 400), lines + [f"Body line {n} about lexical retrieval of passages." for n in range(20)],
                     fontsize=9)
    document.save(path)
    document.close()
    return path


def test_a_catalog_from_before_venues_is_upgraded_in_place_and_keeps_everything(tmp_path: Path) -> None:
    catalog = tmp_path / "home" / "library.db"
    catalog.parent.mkdir(parents=True)
    conn = sqlite3.connect(catalog, isolation_level=None)
    assert ensure_schema(conn, MIGRATIONS, target=4) == 4  # exactly what the previous release created
    # A version 4 catalog holds a corrected title both in the row and in the table of edits.
    conn.execute("INSERT INTO documents(id, content_hash, path, title, authors, year, status, added_at, updated_at) "
                 "VALUES ('d1', 'h1', '/p/a.pdf', 'Corrected Title', '[\"Ada Lovelace\"]', 1843, 'indexed', 1, 1)")
    conn.execute("INSERT INTO document_edits VALUES ('d1', ?, 2)", (json.dumps({"title": "Corrected Title"}),))
    conn.close()

    library = Library(catalog)
    try:
        assert current_version(library._conn) == SCHEMA_VERSION == 8
        document = library.document("d1")
        assert (document.bib.title, document.bib.authors, document.bib.year, document.bib.venue) == (
            "Corrected Title", ("Ada Lovelace",), 1843, "")
        from engine.store.edits import update_metadata

        edited = update_metadata(library, "d1", venue="  Notes on the   Analytical Engine ")
        assert edited.bib.venue == "Notes on the Analytical Engine" and edited.bib.title == "Corrected Title"
        with pytest.raises(MetadataError, match="Venue"):
            update_metadata(library, "d1", venue="x" * 400)
    finally:
        library.close()
    reopened = Library(catalog)  # a second open finds version 5 and migrates nothing
    try:
        assert reopened.document("d1").bib.venue == "Notes on the Analytical Engine"
    finally:
        reopened.close()


def _set_field(folder: Path, key: str, field_id: int, name: str, value: str, modified: str) -> None:
    """Change one field of a Zotero item as Zotero would (and bump its modification time)."""
    db = sqlite3.connect(folder / "zotero.sqlite")
    db.execute("INSERT OR IGNORE INTO fields VALUES (?, ?, NULL)", (field_id, name))
    db.execute("INSERT OR IGNORE INTO itemDataValues(value) VALUES (?)", (value,))
    value_id = db.execute("SELECT valueID FROM itemDataValues WHERE value=?", (value,)).fetchone()[0]
    item_id = db.execute("SELECT itemID FROM items WHERE key=?", (key,)).fetchone()[0]
    db.execute("INSERT OR REPLACE INTO itemData VALUES (?,?,?)", (item_id, field_id, value_id))
    db.execute("UPDATE items SET dateModified=? WHERE itemID=?", (modified, item_id))
    db.commit()
    db.close()


def test_a_users_edit_wins_over_a_later_zotero_reimport(engine: Engine, tmp_path: Path) -> None:
    zotero = Zotero(tmp_path / "Zotero")
    from test_zotero import make_pdf

    item = zotero.item("journalArticle", "SPEC0001", {"title": SPECTER, "date": "2020"},
                       [("Arman", "Cohan", 1)])
    zotero.attach(item, "ATT00001", "storage:specter.pdf")
    make_pdf(zotero.folder / "storage" / "ATT00001" / "specter.pdf", "specter")
    zotero.close()
    _set_field(zotero.folder, "SPEC0001", 12, "publicationTitle", "Proceedings of ACL", "2024-01-02 10:00:00")
    engine.import_zotero(zotero.folder)
    (document,) = engine.documents()
    assert (document.bib.title, document.bib.venue, document.bib.year) == (SPECTER, "Proceedings of ACL", 2020)

    engine.update_metadata(document.id, title="SPECTER (my title)")
    _set_field(zotero.folder, "SPEC0001", 1, "title", "SPECTER (Zotero's new title)", "2024-05-01 10:00:00")
    _set_field(zotero.folder, "SPEC0001", 6, "date", "2021", "2024-05-01 10:00:00")
    report = engine.import_zotero(zotero.folder)

    assert report.updated == 1
    after = engine.document(document.id)
    assert after.bib.title == "SPECTER (my title)"  # the user's edit survives the re-import
    assert after.bib.year == 2021  # a field the user never touched follows Zotero
    assert engine.passages(document.id)[0].title == "SPECTER (my title)"  # and search sees the edit
    # Re-reading the PDF keeps both layers as well.
    pdf = zotero.folder / "storage" / "ATT00001" / "specter.pdf"
    list(engine.add_documents([pdf]))
    bib = engine.document(document.id).bib
    assert (bib.title, bib.year) == ("SPECTER (my title)", 2021)


def test_a_datastore_record_fills_only_what_the_pdf_left_empty(engine: Engine, tmp_path: Path) -> None:
    records = [{"id": "R1", "title": "Sparse Retrieval Without Labels: the Datastore's Title",
                "authors": ["Grace Hopper", "Alan Turing"], "year": 2021, "doi": DOI.upper(),
                "text": "Lexical retrieval without labels works. " * 5},
               {"id": "R2", "title": "Unrelated", "year": 1999, "doi": "10.5555/other",
                "text": "Something else entirely. " * 5}]
    jsonl = tmp_path / "records.jsonl"
    jsonl.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    engine.add_datastore(jsonl, "bib", embed=False)

    (result,) = list(engine.add_documents([bare_pdf(tmp_path / "a.pdf", [f"doi:{DOI}"])]))
    filled = engine.document(result.doc_id)
    assert filled.bib.doi == DOI
    assert filled.bib.year == 2021 and filled.bib.authors == ("Grace Hopper", "Alan Turing")  # the PDF had neither
    assert filled.bib.title == "Sparse Retrieval Without Labels"  # the PDF's own title is kept

    engine.update_metadata(filled.id, year="2020")  # the user knows better than the datastore
    list(engine.add_documents([tmp_path / "a.pdf"]))  # unchanged file: nothing is re-read
    pdf_b = bare_pdf(tmp_path / "b.pdf", [f"doi:{DOI}", "A second printing."])  # same paper, new bytes
    (again,) = list(engine.add_documents([pdf_b]))
    assert engine.document(filled.id).bib.year == 2020
    assert engine.document(again.doc_id).bib.year == 2021

    (unmatched,) = list(engine.add_documents([bare_pdf(tmp_path / "c.pdf", ["doi:10.5555/not.in.the.store"])]))
    assert engine.document(unmatched.doc_id).bib.year is None and engine.document(unmatched.doc_id).bib.authors == ()
