"""`quire library watch` and `quire library sync` as a user runs them, and a SIGKILL in a watched burst."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf

from engine.cli.main import main

PAST = time.time() - 3600


def _papers(folder: Path, count: int, prefix: str = "paper") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        path = folder / f"{prefix}{n:03}.pdf"
        text_pdf(path, [f"Study {prefix} {n}.\n" + paper_text(f"{prefix}word{n:03}", 2)] * 3)
        os.utime(path, (PAST, PAST))


def test_watch_add_list_sync_remove(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home, folder = str(tmp_path / "home"), tmp_path / "papers"
    _papers(folder, 2)
    assert main(["--home", home, "library", "sync"]) == 1
    assert "no watched folders" in capsys.readouterr().err
    assert main(["--home", home, "library", "watch", "add", str(folder)]) == 0
    assert main(["--home", home, "library", "watch", "add", str(folder / "missing")]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert main(["--home", home, "library", "sync", "--no-embed", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(r["outcome"] for r in report["results"]) == ["added", "added"]
    (folder / "paper000.pdf").unlink()
    assert main(["--home", home, "library", "sync", "--no-embed"]) == 0
    assert "missing    " in capsys.readouterr().out
    assert main(["--home", home, "library", "list"]) == 0
    assert f"[missing: its file {folder / 'paper000.pdf'} is gone]" in capsys.readouterr().out
    assert main(["--home", home, "library", "watch", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [f["path"] for f in listed["folders"]] == [str(folder)] and len(listed["missing"]) == 1
    assert main(["--home", home, "library", "watch", "remove", str(folder)]) == 0
    assert main(["--home", home, "library", "watch", "list"]) == 0
    assert "No watched folders" in capsys.readouterr().out


def _count(catalog: Path) -> int:
    try:
        with sqlite3.connect(f"file:{catalog}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM documents WHERE status='indexed'").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_sigkill_during_a_watched_burst_then_restart_loses_and_doubles_nothing(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "papers"
    _papers(folder, 60)
    command = [sys.executable, "-m", "engine.cli.main", "--home", str(home), "library"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    subprocess.run([*command, "watch", "add", str(folder)], check=True, env=env, capture_output=True)
    running = subprocess.Popen([*command, "watch", "run", "--no-embed"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while _count(home / "library.db") < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(running.pid, signal.SIGKILL)  # the parse workers with it, as a crash would
    finally:
        running.wait(10)
    stored = _count(home / "library.db")
    assert 5 <= stored < 60, "the kill should land midway through the burst"

    subprocess.run([*command, "sync", "--no-embed"], check=True, env=env, capture_output=True, timeout=300)
    with sqlite3.connect(home / "library.db") as conn:
        paths = [row[0] for row in conn.execute("SELECT path FROM files")]
        documents = conn.execute("SELECT COUNT(*), COUNT(DISTINCT content_hash) FROM documents").fetchone()
        statuses = {row[0] for row in conn.execute("SELECT status FROM documents")}
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert sorted(Path(p).name for p in paths) == [f"paper{n:03}.pdf" for n in range(60)]
    assert tuple(documents) == (60, 60) and statuses == {"indexed"}
