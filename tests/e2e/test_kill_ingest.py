"""`quire ingest` killed with SIGKILL mid-batch leaves a catalog that opens, is whole, and resumes.

Each document is parsed inside its own write transaction (passages stream from the parser into
the database), so a kill shortly after a document is reported lands, most of the time, in the
middle of the next document's transaction; one case instead kills as the next commit starts
writing SQLite's log. Whatever the moment, the catalog must hold every document whole or not at
all, and a second run must add exactly the missing ones and report the stored ones as unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.store import Library

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")]


def quire_command(home: Path, *args: str) -> list[str]:
    """The installed console script when there is one (as a user runs it), else the module."""
    script = shutil.which("quire", path=str(Path(sys.executable).parent))
    prefix = [script] if script else [sys.executable, "-m", "engine.cli.main"]
    return [*prefix, "--home", str(home), *args]


def environment() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "QUIRE_HOME"}


WAL_GROWTH = -1.0  # instead of a delay: kill the moment the next commit starts writing the log


def wait_for_wal_growth(wal: Path, limit: float = 30.0) -> None:
    """Spin until SQLite's write-ahead log grows: the next document's commit is being written."""
    size = wal.stat().st_size
    deadline = time.monotonic() + limit
    while wal.stat().st_size == size and time.monotonic() < deadline:
        pass


def ingest_and_kill(home: Path, papers: Path, stored_before_kill: int, delay: float) -> list[str]:
    """Start an ingest, SIGKILL it ``delay`` seconds after it reported ``stored_before_kill`` files.

    With ``WAL_GROWTH`` the kill comes as soon as the next commit starts writing the log: it
    lands during that write (frames on disk, no commit record) or just after it (a document
    stored but never reported). Returns the file names reported as added before the kill.
    """
    process = subprocess.Popen(quire_command(home, "ingest", str(papers)), stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, encoding="utf-8", env=environment())
    reported: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:  # one line per stored file, printed after its commit
            if line.startswith("added"):
                reported.append(line.split()[1])
                if len(reported) >= stored_before_kill:
                    break
        if delay == WAL_GROWTH:
            wait_for_wal_growth(home / "library.db-wal")
        else:
            time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert len(reported) == stored_before_kill, "the ingest ended before it could be killed"
    assert process.returncode == -signal.SIGKILL, "the ingest finished before the kill reached it"
    return reported


def assert_catalog_whole(catalog: Path) -> set[str]:
    """The catalog opens, passes its own checks and ours; returns the stored files' names."""
    library = Library(catalog)
    try:
        assert library.check_integrity() == []
        documents = library.documents()
        for document in documents:
            assert document.status.value == "indexed", document
            assert document.passage_count > 0 and document.page_count > 0, document
            assert document.passage_count == len(library.passages(document.id)), document
            assert len(library.pages(document.id)) == document.page_count, document
        stored = {Path(document.path).name for document in documents}
    finally:
        library.close()
    # Read-only, straight SQL: nothing left over from a transaction that never committed.
    connection = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
    try:
        orphans = {
            "passages": "SELECT COUNT(*) FROM passages WHERE doc_id NOT IN (SELECT id FROM documents)",
            "pages": "SELECT COUNT(*) FROM pages WHERE doc_id NOT IN (SELECT id FROM documents)",
            "rectangles": "SELECT COUNT(*) FROM passage_rects WHERE passage_rowid NOT IN (SELECT rowid FROM passages)",
            "search entries": "SELECT COUNT(*) FROM passages_fts WHERE rowid NOT IN (SELECT rowid FROM passages)",
            "files": "SELECT COUNT(*) FROM files WHERE doc_id NOT IN (SELECT id FROM documents)",
            "unsearchable passages": "SELECT COUNT(*) FROM passages WHERE rowid NOT IN "
                                     "(SELECT rowid FROM passages_fts)",
        }
        found = {name: connection.execute(query).fetchone()[0] for name, query in orphans.items()}
    finally:
        connection.close()
    assert found == dict.fromkeys(orphans, 0)
    return stored


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("stored_before_kill", "delay"), [
    # Right after a commit: the next document's transaction has just begun.
    pytest.param(2, 0.0, id="after-2-at-once"),
    # While the next documents' passages are being parsed and inserted.
    pytest.param(2, 0.15, id="after-2-plus-150ms"),
    pytest.param(5, 0.4, id="after-5-plus-400ms"),
    # While a commit is being written, or between a commit and its report.
    pytest.param(3, WAL_GROWTH, id="after-3-during-commit"),
])
def test_sigkill_mid_ingest_leaves_a_whole_catalog_that_resumes(tmp_path: Path, papers_dir: Path,
                                                                 stored_before_kill: int, delay: float) -> None:
    home = tmp_path / "home"
    reported = ingest_and_kill(home, papers_dir, stored_before_kill, delay)

    stored = assert_catalog_whole(home / "library.db")
    # Everything reported was committed, and files are stored in order (small ones may have been
    # committed between the last report and the kill): no gap where a document went missing.
    in_order = sorted(path.name for path in papers_dir.glob("*.pdf"))
    assert set(reported) <= stored
    assert stored == set(in_order[:len(stored)])
    assert len(stored) < len(in_order), "the kill came too late to interrupt anything"

    # --no-embed: what is under test is the catalog; embedding 680 passages would only add minutes.
    done = subprocess.run(quire_command(home, "ingest", str(papers_dir), "--json", "--no-embed"), capture_output=True,
                          text=True, encoding="utf-8", env=environment(), timeout=240, check=False)
    assert done.returncode == 0, done.stderr
    outcomes = {Path(result["path"]).name: result["outcome"] for result in json.loads(done.stdout)}
    papers = {path.name for path in papers_dir.glob("*.pdf")}
    assert set(outcomes) == papers
    assert {name for name, outcome in outcomes.items() if outcome == "unchanged"} == stored
    assert {name for name, outcome in outcomes.items() if outcome == "added"} == papers - stored

    assert assert_catalog_whole(home / "library.db") == papers
    listed = subprocess.run(quire_command(home, "library", "list", "--json"), capture_output=True, text=True,
                            encoding="utf-8", env=environment(), timeout=60, check=True)
    assert {Path(document["path"]).name for document in json.loads(listed.stdout)} == papers
