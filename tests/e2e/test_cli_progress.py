"""Long CLI steps say how far they are, through real subprocesses: on a terminal a line redrawn in place with
counts, rate and time left; off a terminal plain lines now and then; with --json nothing at all."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import quire

pytestmark = pytest.mark.slow

# Two of the bundled papers: 21 pages, 76 passages to embed, some seconds of work.
DEMO = sorted((Path(__file__).parents[2] / "resources" / "demo").glob("*.pdf"))[1:3]
# "2/4 files  0.4/s  5s left", "120/180 passages  31/s  2s left"
COUNTS = re.compile(r"\d+/\d+ (files|passages)\s+[\d.,]+/s\s+\d+(s|m\d\ds) left")


def on_terminal(home: Path, *args: str | Path) -> tuple[int, str]:
    """Run the CLI with its stderr on a pseudo-terminal, as in a user's shell; (exit code, what stderr drew)."""
    environment = {key: value for key, value in os.environ.items() if key != "QUIRE_HOME"}
    environment["COLUMNS"] = "160"
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "engine.cli.main", "--home", str(home), *map(str, args)],
                               stdout=subprocess.DEVNULL, stderr=follower, env=environment)
    os.close(follower)
    drawn = bytearray()
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closes with the process
            break
        if not chunk:
            break
        drawn.extend(chunk)
    os.close(leader)
    return process.wait(timeout=300), drawn.decode("utf-8", "replace")


def test_off_a_terminal_ingest_and_embedding_print_plain_progress_lines(tmp_path: Path) -> None:
    # A line at every update: how often lines come by default depends on how fast this machine is.
    done = quire(tmp_path / "home", "ingest", *DEMO, env={"QUIRE_PROGRESS_EVERY": "0"})
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if COUNTS.search(line)]
    assert lines, done.stderr
    assert "\r" not in done.stderr  # nothing drawn in place where no terminal redraws it


def test_on_a_terminal_the_line_shows_counts_rate_and_time_left(tmp_path: Path) -> None:
    code, drawn = on_terminal(tmp_path / "home", "ingest", *DEMO)
    assert code == 0, drawn
    redrawn = drawn.split("\r")
    assert any(COUNTS.search(part) and " files " in part for part in redrawn), drawn
    assert any(COUNTS.search(part) and " passages " in part for part in redrawn), drawn  # the embedding phase


def test_with_json_nothing_is_drawn_even_on_a_terminal(tmp_path: Path) -> None:
    code, drawn = on_terminal(tmp_path / "home", "ingest", "--json", *DEMO)
    assert code == 0, drawn
    assert not COUNTS.search(drawn) and "[#" not in drawn and "[-" not in drawn, drawn
