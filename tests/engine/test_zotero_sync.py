"""Zotero kept in sync: a Zotero 7 database built by the test, changed between syncs, read while held open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from fixtures.zotero_db import Zotero, make_pdf

from engine.cli.main import main
from engine.service import Engine
from engine.types import Outcome
from engine.watch.state import ZOTERO_TRASH

pytestmark = pytest.mark.slow  # each Zotero item is ingested through the parse workers: ~10 s a test


def _library(tmp_path: Path) -> Path:
    z = Zotero(tmp_path / "Zotero")
    z.db.executemany("INSERT INTO version VALUES (?, ?)", [("userdata", 120), ("compatibility", 7)])  # Zotero 7
    for n, key in enumerate(("AAAA0001", "BBBB0002", "CCCC0003")):
        item = z.item("journalArticle", f"ITEM000{n}", {"title": f"Paper {key}"})
        z.attach(item, key, f"storage:{key}.pdf")
        make_pdf(z.folder / "storage" / key / f"{key}.pdf", f"paper {key}")
    z.collect("Thesis", [1, 3])  # the first two papers' items
    z.close()
    return z.folder


def _zotero(folder: Path) -> sqlite3.Connection:
    return sqlite3.connect(folder / "zotero.sqlite", isolation_level=None)


def _by_title(engine: Engine) -> dict[str, tuple[str, ...]]:
    return {d.bib.title: d.collections for d in engine.documents()}


def test_only_what_changed_is_imported_again(engine: Engine, tmp_path: Path) -> None:
    folder = _library(tmp_path)
    first = engine.import_zotero(folder)
    assert (first.added, first.unchanged, first.notice) == (3, 0, "")
    assert _by_title(engine)["Paper AAAA0001"] == ("Thesis",)

    with _zotero(folder) as z:
        z.execute("UPDATE collections SET collectionName='Dissertation'")  # renamed
        z.execute("DELETE FROM collectionItems WHERE itemID=3")  # the second paper taken out of it
        z.execute("UPDATE itemDataValues SET value='Paper C, corrected' WHERE value='Paper CCCC0003'")
        z.execute("UPDATE items SET dateModified='2025-05-05 10:00:00' WHERE key='ITEM0002'")
    again = engine.import_zotero(folder)
    assert (again.added, again.updated, again.unchanged, again.collections_changed) == (0, 1, 2, 2)
    assert all(result.outcome == Outcome.UNCHANGED for result in again.results)  # no PDF was read again
    assert _by_title(engine) == {"Paper AAAA0001": ("Dissertation",), "Paper BBBB0002": (),
                                 "Paper C, corrected": ()}


def test_a_trashed_item_is_missing_until_pruned_and_comes_back_if_restored(engine: Engine, tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    folder = _library(tmp_path)
    engine.import_zotero(folder)
    with _zotero(folder) as z:
        z.execute("INSERT INTO deletedItems(itemID) VALUES (1)")  # the first paper's item, into Zotero's trash
    report = engine.import_zotero(folder)
    [(item, doc_id)] = report.trashed
    assert item.endswith("#1/AAAA0001") and "in Zotero's trash" in report.summary()
    [missing] = engine.missing_files()
    assert (missing.doc_id, missing.kind) == (doc_id, ZOTERO_TRASH) and len(engine.documents()) == 3
    assert main(["--home", str(engine.paths.home), "library", "list"]) == 0
    assert "[missing: moved to Zotero's trash]" in capsys.readouterr().out

    with _zotero(folder) as z:
        z.execute("DELETE FROM deletedItems")  # restored in Zotero
    engine.import_zotero(folder)
    assert engine.missing_files() == []

    with _zotero(folder) as z:
        z.execute("INSERT INTO deletedItems(itemID) VALUES (1)")
    engine.import_zotero(folder)
    assert engine.sync_watched(prune=True).pruned == [item]
    assert sorted(_by_title(engine)) == ["Paper BBBB0002", "Paper CCCC0003"] and engine.missing_files() == []


def test_read_while_zotero_holds_its_database_open_and_locked(engine: Engine, tmp_path: Path) -> None:
    folder = _library(tmp_path)
    zotero = _zotero(folder)  # Zotero running: an exclusive lock for as long as it runs
    zotero.execute("PRAGMA locking_mode=EXCLUSIVE")
    zotero.execute("UPDATE items SET dateModified='2025-06-01 00:00:00' WHERE key='ITEM0000'")
    try:
        report = engine.import_zotero(folder)
        assert report.added == 3 and not report.failed
    finally:
        zotero.close()


def test_a_write_ahead_log_zotero_holds_open_is_read_too(engine: Engine, tmp_path: Path) -> None:
    folder = _library(tmp_path)
    engine.import_zotero(folder)
    zotero = _zotero(folder)
    zotero.execute("PRAGMA locking_mode=EXCLUSIVE")
    zotero.execute("PRAGMA journal_mode=WAL")  # as Zotero 10 runs: recent commits only in zotero.sqlite-wal
    zotero.execute("UPDATE collections SET collectionName='In the log'")
    try:
        assert (folder / "zotero.sqlite-wal").stat().st_size > 0
        report = engine.import_zotero(folder)
        assert report.collections_changed == 2 and _by_title(engine)["Paper AAAA0001"] == ("In the log",)
    finally:
        zotero.close()


def test_a_newer_schema_is_said_plainly(engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _library(tmp_path)
    with _zotero(folder) as z:
        z.execute("UPDATE version SET version=129 WHERE schema='userdata'")
        z.execute("UPDATE version SET version=9 WHERE schema='compatibility'")
    assert main(["--home", str(engine.paths.home), "zotero", "import", str(folder)]) == 0
    captured = capsys.readouterr()
    assert "newer than the versions Quire knows" in captured.err and "userdata 129" in captured.err
    assert "Zotero: 3 added" in captured.out
