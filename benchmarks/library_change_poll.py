"""How the app learns that another process changed its library: SQLite's ``data_version`` against a change counter.

Two ways to notice a commit made by another process, each polled on the app's own open connection:

- ``data_version`` (what ``Library.version`` reads): SQLite changes it whenever another connection
  commits; no writer has to do anything.
- a change-counter row that every writer bumps in its transaction (``SELECT n FROM changes``): seen only
  when the writer remembers to bump it (an older Quire, the ``sqlite3`` shell or a script does not).

A writer subprocess commits ``--commits`` times, one transaction each, in three kinds: a document row
(as ingest writes one), a deletion of it (as `library remove`) and a write that does not bump the counter
(as a writer that does not know about it); after each commit the poller reads both and counts what it saw.
Then each poll is timed ``--polls`` times on an idle catalog.

    python benchmarks/library_change_poll.py [--commits 60] [--polls 20000] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.store import Library

# The writer: one transaction per line read from stdin; "1" bumps the counter, "0" does not.
WRITER = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA busy_timeout=5000")
number = 0
for line in sys.stdin:
    kind, bump = line.split()
    number += 1
    conn.execute("BEGIN IMMEDIATE")
    if kind == "add":
        conn.execute("INSERT INTO answers (id, question, created_at, mode, cancelled, record) "
                     "VALUES (?, 'q', 0, 'digest', 0, '{}')", (f"bench{number}",))
    else:
        conn.execute("DELETE FROM answers WHERE id LIKE 'bench%'")
    if bump == "1":
        conn.execute("UPDATE changes SET n = n + 1")
    conn.execute("COMMIT")
    print("done", flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", type=int, default=60)
    parser.add_argument("--polls", type=int, default=20_000)
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "results" / "library_change_poll.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "library.db"
        library = Library(path)  # the app's connection, opened as the app opens it
        with library.transaction() as conn:
            conn.execute("CREATE TABLE changes (n INTEGER NOT NULL)")
            conn.execute("INSERT INTO changes VALUES (0)")
        seen = _cross_process(library, path, args.commits)
        costs = _poll_costs(library, args.polls)
        library.close()
    result: dict[str, Any] = {
        "what": "commits by another process noticed by each poll, and the cost of one poll on an idle catalog",
        "command": "python benchmarks/library_change_poll.py",
        "commits": args.commits, "seen": seen, "poll_microseconds": costs,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()[0]},
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


def _cross_process(library: Library, path: Path, commits: int) -> dict[str, dict[str, int]]:
    """Per kind of write: how many commits the data_version poll and the counter poll each noticed."""
    kinds = [("add", "1"), ("remove", "1"), ("add", "0")]  # the last: a writer that does not bump the counter
    seen = {f"{kind}{'' if bump == '1' else ' without bumping'}": {"commits": 0, "data_version": 0, "counter": 0}
            for kind, bump in kinds}
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdin is not None and writer.stdout is not None
    try:
        version, counter = library.version(), _counter(library)
        for number in range(commits):
            kind, bump = kinds[number % len(kinds)]
            writer.stdin.write(f"{kind} {bump}\n")
            writer.stdin.flush()
            writer.stdout.readline()  # committed
            tally = seen[f"{kind}{'' if bump == '1' else ' without bumping'}"]
            tally["commits"] += 1
            now_version, now_counter = library.version(), _counter(library)
            tally["data_version"] += now_version != version
            tally["counter"] += now_counter != counter
            version, counter = library.version(), now_counter  # reading the counter is not a change
    finally:
        writer.stdin.close()
        writer.wait(timeout=30)
    return seen


def _counter(library: Library) -> int:
    return int(library.query("SELECT n FROM changes")[0][0])


def _poll_costs(library: Library, polls: int) -> dict[str, float]:
    costs = {}
    for name, poll in (("data_version", library.version), ("counter", lambda: _counter(library))):
        poll()
        started = time.perf_counter()
        for _ in range(polls):
            poll()
        costs[name] = round((time.perf_counter() - started) / polls * 1e6, 2)
    return costs


if __name__ == "__main__":
    main()
