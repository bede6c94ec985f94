"""Ctrl-Z during an ingest, and files that only start like a PDF: the page time limit times the worker.

The stop is placed by construction, not by a sleep that may or may not catch the right moment: a
caller in its own process group stops the group itself at the instant its pool reads the workers'
pipes with nothing in them, the worker halfway through a page. The test waits until the kernel
reports it stopped, keeps it stopped for three page time limits and continues the whole group at
once, as ``fg`` does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixtures.pdfs import many_pages_pdf, paper_text, text_pdf

from engine.errors import IngestError
from engine.importer import Outcome
from engine.ingest.pipeline import IngestOptions, PdfParse
from engine.ingest.worker import ParsePool
from engine.ingest.worker_clock import ABSENCE, WorkerClock
from engine.service import Engine

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and process groups")

PAGE_TIMEOUT = 1.0

# Run in a fresh process group. It stops the group (itself, the fork server, the worker) the first
# time its pool drains the pipes (wait with timeout 0) while the worker, stopped first to hold it
# still, has nothing in its pipe: after the stop, the caller judges the worker before it has sent
# the page it was on. Prints what it read, or the error the file failed with.
CALLER = """
import json, os, signal, sys, time
from pathlib import Path
import psutil
from engine.errors import IngestError
from engine.ingest import worker as worker_module
from engine.ingest.pdf import file_hash
from engine.ingest.pipeline import IngestOptions

real_wait = worker_module.wait
state = {"armed": False, "stops": 0}

def hold_still(pid):
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + 30
    while psutil.Process(pid).status() != psutil.STATUS_STOPPED and time.monotonic() < deadline:
        time.sleep(0.001)

def wait_then_maybe_stop(connections, timeout=None):
    if state["armed"] and timeout == 0:
        pid = job.worker.process.pid
        hold_still(pid)
        if any(connection.poll() for connection in connections):
            os.kill(pid, signal.SIGCONT)  # a page is waiting: the caller would read it first, try later
        else:
            state["armed"] = False
            state["stops"] += 1
            os.killpg(0, signal.SIGSTOP)  # Ctrl-Z: the test continues the group after a while
    return real_wait(connections, timeout)

worker_module.wait = wait_then_maybe_stop
paper = Path(sys.argv[1])
with worker_module.ParsePool(1, page_timeout=float(sys.argv[2])) as pool:
    job = pool.submit(paper, IngestOptions(), file_hash(paper))
    job.wait_meta()
    state["armed"] = True
    try:
        texts = [passage.text for passage in job.passages()]
        print(json.dumps({"texts": texts, "stops": state["stops"]}))
    except IngestError as exc:
        print(json.dumps({"error": exc.reason, "stops": state["stops"]}))
"""


def _parse_in_process(path: Path) -> list[str]:
    with PdfParse(path, IngestOptions()) as parse:
        return [passage.text for passage in parse.passages()]


def _wait_until_stopped(pid: int, deadline_s: float = 120.0) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WUNTRACED | os.WNOHANG)
        if done and os.WIFSTOPPED(status):
            return
        if done:
            pytest.fail(f"the caller exited (status {status}) before it stopped its process group")
        time.sleep(0.01)
    pytest.fail("the caller never stopped its process group")


@pytest.mark.slow
def test_ctrl_z_while_the_caller_reads_the_workers_does_not_fail_a_good_pdf(tmp_path: Path) -> None:
    paper = many_pages_pdf(tmp_path / "long.pdf", 60, lines_per_page=60)
    caller = subprocess.Popen([sys.executable, "-c", CALLER, str(paper), str(PAGE_TIMEOUT)],
                              env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO, start_new_session=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_until_stopped(caller.pid)
        time.sleep(3 * PAGE_TIMEOUT)  # the length of the stop, which has already landed
        os.killpg(caller.pid, signal.SIGCONT)  # `fg`: the caller and its workers go on together
        out, err = caller.communicate(timeout=120)
    finally:
        if caller.poll() is None:
            os.killpg(caller.pid, signal.SIGKILL)
            caller.wait()

    outcome = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
    assert outcome.get("stops") == 1, err
    assert "error" not in outcome, outcome["error"]
    assert outcome["texts"] == _parse_in_process(paper)


def test_a_worker_is_timed_while_it_runs_or_hangs_alone_not_while_all_are_stopped() -> None:
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        clock = WorkerClock(busy.pid)
        deadline = time.monotonic() + 60
        while clock.elapsed() < 0.2 and time.monotonic() < deadline:  # a running worker is timed
            time.sleep(0.05)
        assert clock.elapsed() >= 0.2
        busy.send_signal(signal.SIGSTOP)
        os.waitpid(busy.pid, os.WUNTRACED)
        clock.restart()
        time.sleep(3 * ABSENCE)  # Ctrl-Z: the caller, stopped too, looks next only after the stop
        assert clock.elapsed() < 0.1
        for _ in range(10):  # stopped alone while the caller keeps looking: it will not go on by itself
            time.sleep(ABSENCE / 4)
            clock.elapsed()
        assert clock.elapsed() >= 2 * ABSENCE
    finally:
        busy.kill()
        busy.wait()


# --- a file that only starts like a PDF ---------------------------------------------------------


def _hollow_pdf(path: Path, size: int) -> Path:
    with path.open("wb") as handle:  # the size on paper, a few KiB on disk
        handle.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
        handle.truncate(size)
    return path


def test_a_huge_sparse_file_that_starts_like_a_pdf_is_refused_before_it_is_read(engine: Engine,
                                                                                tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    hollow = _hollow_pdf(folder / "download.pdf", 20 << 30)
    text_pdf(folder / "real.pdf", [paper_text("sparse files")])

    started = time.monotonic()
    results = {Path(r.path).name: r for r in engine.add_documents([folder])}

    assert time.monotonic() - started < 60  # hashing 20 GB alone takes minutes
    assert results["real.pdf"].outcome == Outcome.ADDED
    refused = results[hollow.name]
    assert refused.outcome == Outcome.FAILED
    assert "20.0 GB" in refused.reason and "mostly empty" in refused.reason, refused.reason
    assert "page" not in refused.reason


@pytest.mark.slow
def test_a_file_too_slow_to_open_is_not_blamed_on_a_page(tmp_path: Path) -> None:
    # Past the hollow-file check (the pool is handed it directly): MuPDF scans every byte for the
    # document's structure, which takes far longer than the limit.
    hollow = _hollow_pdf(tmp_path / "download.pdf", 64 << 30)
    with ParsePool(1, page_timeout=PAGE_TIMEOUT) as pool:
        job = pool.submit(hollow, IngestOptions(), "0" * 64)
        with pytest.raises(IngestError) as failed:
            job.wait_meta()
    reason = failed.value.reason
    assert "opening the file (64.0 GB) took longer than 1 s" in reason, reason
    assert "page" not in reason

