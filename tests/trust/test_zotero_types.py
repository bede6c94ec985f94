"""A zotero.sqlite whose columns hold values of the wrong type (SQLite lets any column hold any type):
the bad item is skipped with a note and the rest imported; a field that is not UTF-8 costs nothing
but its bad bytes; a view named in another case than Zotero's table is refused at once."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.zotero_db import Zotero, make_pdf

from engine.embed import HashingEmbedder
from engine.service import Engine
from engine.zotero import ZoteroError, read_zotero


def zotero_with(tmp_path: Path, spoil: Callable[[sqlite3.Connection, int], None]) -> Zotero:
    """Two papers with their PDFs; ``spoil`` then changes the second's rows (given its attachment's itemID)."""
    z = Zotero(tmp_path / "Zotero")
    attachments = []
    for number in range(2):
        paper = z.item("journalArticle", f"PAPR000{number}", {"title": f"Graph kernels, part {number}"},
                       [("Ada", f"Author{number}", 1)])
        attachments.append(z.attach(paper, f"ATT0000{number}", f"storage:paper{number}.pdf"))
        make_pdf(z.folder / "storage" / f"ATT0000{number}" / f"paper{number}.pdf", f"kernels {number}")
    spoil(z.db, attachments[1])
    z.close()
    return z


def library_id_text(db: sqlite3.Connection, attachment: int) -> None:
    db.execute("UPDATE items SET libraryID = 'abc' WHERE itemID = ?", (attachment,))


def path_as_blob(db: sqlite3.Connection, attachment: int) -> None:
    db.execute("UPDATE itemAttachments SET path = CAST(path AS BLOB) WHERE itemID = ?", (attachment,))


def creator_name_as_blob(db: sqlite3.Connection, attachment: int) -> None:
    db.execute("UPDATE creators SET lastName = CAST(lastName AS BLOB) WHERE lastName = 'Author1'")


def title_not_utf8(db: sqlite3.Connection, attachment: int) -> None:
    db.execute("UPDATE itemDataValues SET value = CAST(X'4772617068206B65726E656C73FF2C20706172742031' AS TEXT) "
               "WHERE value = 'Graph kernels, part 1'")


@pytest.mark.parametrize("spoil", [path_as_blob, creator_name_as_blob, title_not_utf8],
                         ids=["path-blob", "creator-blob", "title-not-utf8"])
def test_a_value_of_another_type_or_encoding_is_read_as_text(tmp_path: Path,
                                                             spoil: Callable[[sqlite3.Connection, int], None]) -> None:
    z = zotero_with(tmp_path, spoil)
    items = read_zotero(z.folder)
    assert [item.pdf is not None for item in items] == [True, True]
    assert items[1].authors == ("Ada Author1",)
    assert items[1].title.startswith("Graph kernels") and items[1].title.endswith("part 1")


def test_an_item_whose_library_id_is_not_a_number_is_skipped_with_a_note(tmp_path: Path) -> None:
    z = zotero_with(tmp_path, library_id_text)
    with Engine(tmp_path / "home") as engine:
        engine.embedder = HashingEmbedder()
        report = engine.import_zotero(z.folder)
        assert len(engine.documents()) == 1
    assert len(report.failed) == 1 and "wrong type in libraryID" in report.failed[0][1]


def test_a_view_named_in_another_case_is_refused_at_once(tmp_path: Path) -> None:
    z = zotero_with(tmp_path, lambda db, _: db.executescript(
        "DROP TABLE itemData; CREATE VIEW itemdata(itemID, fieldID, valueID) AS WITH RECURSIVE n(i) AS "
        "(SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i, 1, 1 FROM n;"))
    started = time.monotonic()
    with pytest.raises(ZoteroError, match="itemdata is a view"):
        read_zotero(z.folder)
    assert time.monotonic() - started < 10
