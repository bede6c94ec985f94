"""A damaged `zotero.sqlite` (cut short, a page overwritten, its header gone, zero bytes): the import stops
before adding anything, says the file is damaged and how Zotero repairs it, and the library (with the
papers already in it) and Zotero's file are left exactly as they were."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf
from fixtures.zotero_db import Zotero, make_pdf

from engine.service import Engine
from engine.zotero import ZoteroError

pytestmark = pytest.mark.slow  # a library per case

PAGE = 4096


@pytest.fixture(scope="module")
def intact(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A Zotero database of 300 items (94 pages: a damaged page lands in its data), 3 with their PDF."""
    zotero = Zotero(tmp_path_factory.mktemp("intact") / "Zotero")
    for number in range(300):
        title = f"Protein folding paper {number} " + "x" * 200
        item = zotero.item("journalArticle", f"IT{number:06d}", {"title": title, "date": "2020"},
                           [("A", f"Author{number}", 1)])
        zotero.attach(item, f"AT{number:06d}", f"storage:p{number}.pdf")
    zotero.close()
    return (zotero.folder / "zotero.sqlite").read_bytes()


def damaged(kind: str, good: bytes) -> bytes:
    middle = len(good) // 2 // PAGE * PAGE
    noise = bytes(random.Random(3).getrandbits(8) for _ in range(2 * PAGE))
    return {"cut short": good[:len(good) // 2], "a page overwritten": good[:middle] + noise + good[middle + 2 * PAGE:],
            "header gone": bytes(100) + good[100:], "pages zeroed": good[:2 * PAGE] + bytes(len(good) - 2 * PAGE),
            "empty": b""}[kind]


@pytest.mark.parametrize("kind", ["cut short", "a page overwritten", "header gone", "pages zeroed", "empty"])
def test_a_damaged_zotero_database_is_named_and_nothing_is_lost(intact: bytes, kind: str, tmp_path: Path) -> None:
    folder = tmp_path / "Zotero"
    (folder / "storage" / "AT000000").mkdir(parents=True)
    make_pdf(folder / "storage" / "AT000000" / "p0.pdf", "protein folding")
    database = folder / "zotero.sqlite"
    database.write_bytes(damaged(kind, intact))
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    with Engine(tmp_path / "home") as engine:
        list(engine.add_documents([text_pdf(tmp_path / "own.pdf", [paper_text("citation graphs")])]))
        with pytest.raises(ZoteroError) as raised:
            engine.import_zotero(folder)
        message = str(raised.value)
        assert "nothing was imported" in message, message
        assert ("is empty" in message) if kind == "empty" else ("is damaged" in message and
                                                                "zotero.sqlite.bak" in message), message
        assert len(engine.documents()) == 1 and engine.library.check_integrity() == []
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before  # Zotero's file is never written
