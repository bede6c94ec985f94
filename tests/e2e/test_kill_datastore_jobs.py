"""`quire datastore embed` and `quire datastore pack` killed with SIGKILL mid-work, as a user's crash or
``kill -9`` would: the status says what was kept, the next run loses at most the step in progress, and
no hidden partial file stays behind.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engine.datastore.files import CACHE_FILE
from engine.retrieve.embedding import EMBED_STEP

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")]

REPO = Path(__file__).resolve().parents[2]


def command(home: Path, *args: str | Path) -> list[str]:
    return [sys.executable, "-m", "engine.cli.main", "--home", str(home), *map(str, args)]


def environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "QUIRE_HOME"}
    return {**env, "PYTHONPATH": str(REPO)}


def quire(home: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command(home, *args), capture_output=True, text=True, encoding="utf-8",
                          env=environment(), timeout=600, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr[-800:]
    return done


def datastore(home: Path, tmp_path: Path, records: int, words_each: int = 120) -> None:
    """A datastore of ``records`` records of made-up words (each one passage), imported without embedding."""
    rng = random.Random(7)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(3, 9))) for _ in range(4000)]
    data = tmp_path / "records.jsonl"
    with data.open("w", encoding="utf-8") as out:
        for number in range(records):
            out.write(json.dumps({"id": f"r{number}", "title": " ".join(rng.choices(words, k=8)),
                                  "text": " ".join(rng.choices(words, k=words_each))}) + "\n")
    quire(home, "datastore", "add", data, "--name", "big", "--no-embed")


def cached_vectors(cache: Path) -> int:
    if not cache.is_file():
        return 0
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])
    except sqlite3.OperationalError:  # the writer is creating the table this instant
        return 0


def status(home: Path) -> dict[str, Any]:
    [info] = json.loads(quire(home, "datastore", "list", "--json").stdout)
    return dict(info)


def test_an_embedding_killed_before_its_first_index_save_is_counted_and_resumes(tmp_path: Path) -> None:
    home, total = tmp_path / "home", EMBED_STEP + 64
    datastore(home, tmp_path, total, words_each=30)
    cache = home / "datastores" / "big" / CACHE_FILE
    process = subprocess.Popen(command(home, "datastore", "embed", "big"), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=environment(), cwd=REPO)
    try:  # killed once its first step's vectors are in the cache, long before the index's first save
        deadline = time.monotonic() + 300
        while cached_vectors(cache) < EMBED_STEP and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGKILL, "the embedding finished before the kill reached it"
    kept = cached_vectors(cache)
    assert EMBED_STEP <= kept < total

    info = status(home)
    assert (info["embedded"], info["passages"]) == (kept, total), info
    listing = quire(home, "datastore", "list").stdout
    assert f"{kept:,} of {total:,} embedded, resumable" in listing, listing

    resumed = quire(home, "-v", "datastore", "embed", "big")
    # Nothing the killed run had cached is computed again: the kill lost at most the step it interrupted.
    assert f": {total - kept} embedded now" in resumed.stderr, resumed.stderr
    assert cached_vectors(cache) == total
    assert status(home)["embedded"] == total


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.startswith("."))


def test_a_pack_killed_mid_write_leaves_nothing_after_the_next_pack_into_that_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    datastore(home, tmp_path, 3000)
    out = tmp_path / "packs"
    out.mkdir()
    process = subprocess.Popen(command(home, "datastore", "pack", "big", out, "--version", "1"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment(), cwd=REPO)
    try:
        deadline = time.monotonic() + 120
        while not any(name.endswith(".part") for name in leftovers(out)) and time.monotonic() < deadline \
                and process.poll() is None:
            time.sleep(0.002)
        time.sleep(0.05)  # into the archive's writing
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGKILL, "the pack finished before the kill reached it"
    left = leftovers(out)
    assert any(name.endswith(".part") for name in left) and any(name.endswith(".staging") for name in left), left
    assert not list(out.glob("*.quirepack"))

    # The next pack into that folder, of another version (another file name), cleans up after the killed one.
    quire(home, "datastore", "pack", "big", out, "--version", "2")
    assert leftovers(out) == [], leftovers(out)
    assert [path.name for path in out.iterdir()] == ["big-2.quirepack"]
