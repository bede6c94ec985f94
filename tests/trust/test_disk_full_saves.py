"""A full disk at the moment a change is saved: one clear "disk full" message, nothing half-written.

The library's database is made really full with SQLite's own ``max_page_count`` (the file may not
grow past its current size), so every write that needs a new page fails inside SQLite exactly as
on a full disk (SQLITE_FULL), with no privilege and no mock. CI spot checks: none of these is slow.
The commands that only free pages (removing a paper, deleting an answer) need a disk that is really
full, so they run on a small tmpfs (skipped where the kernel allows no private mount).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf
from fixtures.small_disk import run_on_full_disk
from fixtures.zotero_db import Zotero, make_pdf

from engine.errors import StoreError
from engine.service import Engine
from engine.store.answers import save_answer
from engine.store.record import answer_from_dict

REPO = Path(__file__).resolve().parents[2]
SAVED_ANSWER = REPO / "tests" / "data" / "saved_answer" / "answer.json"


def fill_up(engine: Engine) -> None:
    """From now on the library's database cannot grow by a single page: a full disk, as SQLite sees one."""
    conn: sqlite3.Connection = engine.library._conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")


def assert_disk_full(error: pytest.ExceptionInfo[StoreError], home: Path) -> None:
    message = str(error.value)
    assert f"The disk holding {home}" in message and "is full" in message, message
    assert "not saved" in message and "run the same command again" in message, message
    assert "delete" not in message.lower(), message


@pytest.fixture
def library(tmp_path: Path) -> Path:
    (tmp_path / "inbox").mkdir()
    text_pdf(tmp_path / "inbox" / "citations.pdf", [paper_text("citation graphs")])
    home = tmp_path / "home"
    with Engine(home) as engine:
        assert [r.outcome.value for r in engine.add_documents([tmp_path / "inbox"])] == ["added"]
    return home


def test_an_edit_on_a_full_disk_says_so_and_changes_nothing(library: Path) -> None:
    with Engine(library) as engine:
        paper = engine.documents()[0]
        fill_up(engine)
        with pytest.raises(StoreError) as error:
            engine.update_metadata(paper.id, title="A much longer corrected title " * 300, authors=["A. Author"])
        assert_disk_full(error, library)
    with Engine(library) as engine:
        assert engine.document(paper.id).bib == paper.bib  # neither the title nor the authors half-changed


def test_saving_an_answer_on_a_full_disk_says_so_and_saves_nothing(library: Path) -> None:
    answer = answer_from_dict(json.loads(SAVED_ANSWER.read_text(encoding="utf-8")))
    with Engine(library) as engine:
        fill_up(engine)
        with pytest.raises(StoreError) as error:
            save_answer(engine.library, answer)
        assert_disk_full(error, library)
    with Engine(library) as engine:
        assert engine.answers() == []


def test_a_zotero_import_on_a_full_disk_stops_with_one_message(library: Path, tmp_path: Path) -> None:
    zotero = Zotero(tmp_path / "Zotero")
    for number in range(3):
        item = zotero.item("journalArticle", f"ITEM000{number}", {"title": f"Kernel paper {number}"})
        zotero.attach(item, f"ATT0000{number}", f"storage:paper{number}.pdf")
        make_pdf(zotero.folder / "storage" / f"ATT0000{number}" / f"paper{number}.pdf", f"kernels {number}")
    zotero.close()
    with Engine(library) as engine:
        fill_up(engine)
        with pytest.raises(StoreError) as error:
            engine.import_zotero(zotero.folder)
        message = str(error.value)
        assert "The disk holding" in message and "is full" in message, message
        assert "unexpected error" not in message and "report" not in message, message
    with Engine(library) as engine:
        assert len(engine.documents()) == 1
        assert engine.library.check_integrity() == []


@pytest.mark.parametrize("command", [("library", "remove", "FIRST"), ("answers", "delete", "ANSWER")],
                         ids=["library-remove", "answers-delete"])
def test_commands_that_delete_on_a_full_disk_say_so(library: Path, tmp_path: Path, command: tuple[str, ...]) -> None:
    answer = answer_from_dict(json.loads(SAVED_ANSWER.read_text(encoding="utf-8")))
    with Engine(library) as engine:
        save_answer(engine.library, answer)
        first = engine.documents()[0].id
    args = [{"FIRST": first, "ANSWER": answer.id}.get(arg, arg) for arg in command]
    home, stage = tmp_path / "mounted", tmp_path / "disk"
    shutil.copytree(library, stage)
    # Room to open the library (SQLite's 32 KB shared-memory index), none for the log of the change.
    done = run_on_full_disk(home, [sys.executable, "-m", "engine.cli.main", "--home", str(home), *args],
                            stage=stage, leave=40_000, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and f"The disk holding {home} is full" in done.stderr, done.stderr
    with Engine(stage) as engine:  # nothing half-done: the paper and the answer are both still there
        assert [d.id for d in engine.documents()] == [first]
        assert [a.id for a in engine.answers()] == [answer.id]
        assert engine.library.check_integrity() == []
