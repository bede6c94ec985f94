"""The catalog's schema code: hand-written SQL (before) against sqlite-utils (now), in one run.

Times, on files in a temporary folder, opened as ``Library`` opens them (WAL, foreign keys on):
creating a fresh catalog, opening an up-to-date one (which only reads its version), and
migrating a version 1 catalog to the current version. The two implementations run interleaved,
one of each per round, so that load from other jobs falls on both alike; medians and bests are
reported. sqlite-utils is imported once per process, on the first schema change (never on an
up-to-date open): beside the warm figures, each implementation's first creation in a fresh
process, import included.

    python benchmarks/schema_speed.py [--rounds 40] [--cold-rounds 5] [--folder DIR] [--json OUT]

On a disk the figures include its syncs, which vary far more than the schema code; ``--folder
/dev/shm`` (memory) leaves only the CPU time of each implementation.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import emit

from engine.sqlite import connect, transaction, use_wal
from engine.store.schema import SCHEMA_VERSION, current_version, ensure_schema

REPO = Path(__file__).resolve().parents[1]

# --- the hand-written schema code sqlite-utils replaced, kept for the comparison ---------

OLD_V1 = (REPO / "tests" / "data" / "catalog_schema_v1.sql").read_text(encoding="utf-8")


def _old_v2(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS answers (id TEXT PRIMARY KEY, question TEXT NOT NULL, "
                 "created_at REAL NOT NULL, mode TEXT NOT NULL, cancelled INTEGER NOT NULL, record TEXT NOT NULL)")
    conn.execute("CREATE INDEX IF NOT EXISTS answers_created ON answers(created_at)")


def _old_v3(conn: sqlite3.Connection) -> None:
    if "kind" not in {row[1] for row in conn.execute("PRAGMA table_info(passages)")}:
        conn.execute("ALTER TABLE passages ADD COLUMN kind TEXT NOT NULL DEFAULT 'text'")


def _old_v4(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS document_edits (doc_id TEXT PRIMARY KEY, edits TEXT NOT NULL, "
                 "edited_at REAL NOT NULL)")
    conn.execute("CREATE TABLE IF NOT EXISTS document_collections (doc_id TEXT NOT NULL, collection TEXT NOT NULL, "
                 "source TEXT NOT NULL, PRIMARY KEY (doc_id, collection))")
    conn.execute("CREATE TABLE IF NOT EXISTS zotero_items (item TEXT PRIMARY KEY, doc_id TEXT NOT NULL, "
                 "modified TEXT NOT NULL, file_path TEXT NOT NULL)")


def _old_v5(conn: sqlite3.Connection) -> None:
    if "venue" not in {row[1] for row in conn.execute("PRAGMA table_info(documents)")}:
        conn.execute("ALTER TABLE documents ADD COLUMN venue TEXT NOT NULL DEFAULT ''")
    conn.execute("CREATE TABLE IF NOT EXISTS document_imported (doc_id TEXT NOT NULL, source TEXT NOT NULL, "
                 "fields TEXT NOT NULL, fill_only INTEGER NOT NULL, imported_at REAL NOT NULL, "
                 "PRIMARY KEY (doc_id, source))")


OLD_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _old_v2, 2: _old_v3, 3: _old_v4, 4: _old_v5}


def old_ensure_schema(conn: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """engine.store.schema.ensure_schema as it was, hand-written SQL throughout."""
    version = current_version(conn)
    if version == target:
        return version
    with transaction(conn):
        if version == 0:
            for statement in OLD_V1.split(";\n"):
                if statement.strip():
                    conn.execute(statement)
            version = 1
        while version < target:
            OLD_MIGRATIONS[version](conn)
            version += 1
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(version),))
    return version


IMPLEMENTATIONS: dict[str, Callable[..., int]] = {"hand-written SQL": old_ensure_schema, "sqlite-utils": ensure_schema}

# --- timing ------------------------------------------------------------------------------


def open_catalog(path: Path, ensure: Callable[..., int]) -> float:
    """Seconds to open ``path`` as Library does (connection, WAL, foreign keys, schema), then close it."""
    started = time.perf_counter()
    conn = connect(path)
    use_wal(conn)
    conn.execute("PRAGMA foreign_keys=ON")
    ensure(conn)
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


def v1_template(folder: Path) -> Path:
    """A version 1 catalog with one document, as the first release wrote it."""
    path = folder / "v1.db"
    conn = connect(path)
    old_ensure_schema(conn, target=1)
    conn.execute("INSERT INTO documents(id, content_hash, path, status, added_at, updated_at) "
                 "VALUES ('d1', 'h1', '/p/a.pdf', 'indexed', 1, 1)")
    conn.close()
    return path


def time_warm(rounds: int, folder: Path) -> dict[str, dict[str, dict[str, float]]]:
    template = v1_template(folder)
    for name, ensure in IMPLEMENTATIONS.items():  # warm up: imports, page cache
        open_catalog(folder / f"warm-{len(name)}.db", ensure)
    seconds: dict[str, dict[str, list[float]]] = {task: {name: [] for name in IMPLEMENTATIONS}
                                                  for task in ("create", "open up-to-date", "migrate v1")}
    for round_number in range(rounds):
        for name, ensure in IMPLEMENTATIONS.items():
            fresh = folder / f"{round_number}-{len(name)}.db"
            seconds["create"][name].append(open_catalog(fresh, ensure))
            seconds["open up-to-date"][name].append(open_catalog(fresh, ensure))
            old = folder / f"{round_number}-{len(name)}-v1.db"
            shutil.copyfile(template, old)
            seconds["migrate v1"][name].append(open_catalog(old, ensure))
            assert current_version(sqlite3.connect(old)) == SCHEMA_VERSION
    return {task: {name: summary(values) for name, values in by_name.items()} for task, by_name in seconds.items()}


COLD_PROBE = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import engine.service  # what a process has loaded (numpy included) before Engine opens its catalog
from schema_speed import IMPLEMENTATIONS, open_catalog
print(open_catalog(Path(sys.argv[3]), IMPLEMENTATIONS[sys.argv[2]]))
"""


def time_cold(rounds: int, folder: Path) -> dict[str, dict[str, float]]:
    """The first creation in a fresh process (sqlite-utils' import included), per implementation."""
    seconds: dict[str, list[float]] = {name: [] for name in IMPLEMENTATIONS}
    for round_number in range(rounds):
        for name in IMPLEMENTATIONS:
            path = folder / f"cold-{round_number}-{len(name)}.db"
            out = subprocess.run([sys.executable, "-c", COLD_PROBE, str(REPO), name, str(path)], check=True,
                                 capture_output=True, text=True, cwd=Path(__file__).parent,
                                 env={**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{Path(__file__).parent}"})
            seconds[name].append(float(out.stdout.strip()))
    return {name: summary(values) for name, values in seconds.items()}


def summary(values: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(values) * 1000, 2), "best_ms": round(min(values) * 1000, 2),
            "runs": len(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--cold-rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--folder", type=Path, help="where the catalogs are made (default: the system's temp folder)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        warm = time_warm(args.rounds, Path(tmp))
        cold = time_cold(args.cold_rounds, Path(tmp))
    results: dict[str, Any] = {
        "folder": str(args.folder or tempfile.gettempdir()), "warm": warm, "first_create_in_a_fresh_process": cold,
        "load_average": {"before": [round(x, 2) for x in load_before],
                         "after": [round(x, 2) for x in os.getloadavg()]},
        "schema_version": SCHEMA_VERSION, "sqlite": sqlite3.sqlite_version,
        "sqlite_utils": metadata.version("sqlite-utils"),
        "python": platform.python_version(), "platform": platform.platform(),
    }
    emit(results, args.json)


if __name__ == "__main__":
    main()
