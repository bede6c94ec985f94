"""A full disk under the library and its datastores: a real tmpfs, filled up, in a private mount namespace.

Each command must say that the disk is full, where, and how much room it wants, exit 1 without a
traceback, and lose nothing stored before. A full disk is never damage, so no message may tell the
user to delete a database or a cache. (The settings file on a full disk is in test_settings_faults.)
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf
from fixtures.small_disk import run_on_full_disk

from engine.embed import HashingEmbedder
from engine.service import Engine

REPO = Path(__file__).resolve().parents[2]
ROOM = 40_000  # enough for SQLite to open the library (its 32 KB shared-memory file), no more


def cli(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "engine.cli.main", "--home", str(home), *args]


def environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "QUIRE_HOME"}
    env["PYTHONPATH"] = str(REPO)
    return env


def assert_disk_full_message(done: subprocess.CompletedProcess[str], where: Path) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert f"The disk holding {where}" in done.stderr and "is full" in done.stderr, done.stderr
    assert "Free about" in done.stderr and "more on that disk" in done.stderr, done.stderr
    for destructive in ("delete", "remove the datastore", "move it aside"):
        assert destructive not in done.stderr, done.stderr


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library holding one paper, not yet embedded."""
    inbox = tmp_path_factory.mktemp("inbox")
    text_pdf(inbox / "citations.pdf", [paper_text("citation graphs")])
    home = tmp_path_factory.mktemp("library") / "home"
    with Engine(home) as engine:
        assert [r.outcome.value for r in engine.add_documents([inbox])] == ["added"]
    return home


@pytest.mark.parametrize("command", [("index",), ("ask", "--digest", "How are citation graphs used?")],
                         ids=["index", "ask"])
@pytest.mark.parametrize("room", [0, ROOM], ids=["no-byte-free", "room-to-open"])
def test_index_and_ask_on_a_full_disk_say_so_without_advising_deletion(ingested: Path, tmp_path: Path,
                                                                      command: tuple[str, ...], room: int) -> None:
    home = tmp_path / "home"
    stage = tmp_path / "disk"
    shutil.copytree(ingested, stage)

    done = run_on_full_disk(home, cli(home, *command), stage=stage, leave=room, env=environment())

    assert_disk_full_message(done, home)
    catalog = sqlite3.connect(stage / "library.db")
    assert catalog.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert catalog.execute("SELECT count(*) FROM passages").fetchone()[0] > 0  # nothing stored was lost


def datastore_records(path: Path, count: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"r{i}", "title": f"Graph kernels {i}",
                                        "text": f"Graph kernels number {i} compare molecules. " * 20}) + "\n"
                            for i in range(count)))
    return path


@pytest.mark.parametrize("room", [0, 150_000], ids=["no-byte-free", "room-for-the-lock"])
def test_datastore_add_on_a_full_disk_says_so_and_leaves_no_half_datastore(tmp_path: Path, room: int) -> None:
    home = tmp_path / "home"
    records = datastore_records(tmp_path / "records.jsonl", 300)
    datastores = home / "datastores"
    stage = tmp_path / "disk"

    done = run_on_full_disk(datastores, cli(home, "datastore", "add", str(records), "--name", "graphs",
                                            "--no-embed"), stage=stage, leave=room, env=environment())

    assert_disk_full_message(done, datastores / "graphs")
    assert not (stage / "graphs").exists()  # no empty datastore that `datastore list` would show
    assert not [p for p in stage.iterdir() if p.name.endswith(".lock")]


def test_datastore_install_on_a_full_disk_says_so(tmp_path: Path) -> None:
    with Engine(tmp_path / "builder") as builder:
        builder.embedder = HashingEmbedder()
        builder.add_datastore(datastore_records(tmp_path / "records.jsonl", 50), "graphs")
        (tmp_path / "out").mkdir()
        pack, _ = builder.pack_datastore("graphs", tmp_path / "out", version="1")
    home = tmp_path / "home"
    datastores = home / "datastores"

    done = run_on_full_disk(datastores, cli(home, "datastore", "install", str(pack), "--reembed", "--no-embed"),
                            stage=tmp_path / "disk", env=environment())

    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "free" in done.stderr and "graphs" in done.stderr, done.stderr
    assert not (tmp_path / "disk" / "graphs").exists()


@pytest.mark.parametrize(("command", "shown"), [(("doctor",), "documents              1"),
                                               (("library", "list"), "citations.pdf"),
                                               (("library", "export", "--format", "ris"), "TY  - ")],
                         ids=["doctor", "library-list", "export"])
def test_commands_that_only_read_work_with_no_byte_free(ingested: Path, tmp_path: Path, command: tuple[str, ...],
                                                        shown: str) -> None:
    """Opening the library for writing needs room (SQLite's log and index); reading it needs none."""
    home = tmp_path / "home"
    stage = tmp_path / "disk"
    shutil.copytree(ingested, stage)

    done = run_on_full_disk(home, cli(home, *command), stage=stage, leave=0, env=environment())

    assert "Traceback" not in done.stderr, done.stderr
    assert shown in done.stdout, (done.stdout, done.stderr)
    if command == ("doctor",):  # the one problem is named, with what to do (and doctor exits 1 on problems)
        assert done.returncode == 1
        assert f"The disk holding {home} is full" in done.stdout and "Free about" in done.stdout
    else:
        assert done.returncode == 0, done.stderr


def test_a_change_with_no_byte_free_says_the_disk_is_full_not_read_only(ingested: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    stage = tmp_path / "disk"
    shutil.copytree(ingested, stage)
    with Engine(ingested) as engine:
        doc_id = engine.documents()[0].id

    done = run_on_full_disk(home, cli(home, "library", "remove", doc_id), stage=stage, leave=0, env=environment())

    assert_disk_full_message(done, home)
    assert "read-only" not in done.stderr
    with Engine(stage) as engine:
        assert [d.id for d in engine.documents()] == [doc_id]
