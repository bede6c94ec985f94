"""Hostile files and folders handed to `quire ingest`, and a caller that stops listening to its workers.

Every input is real: symbolic-link loops, a named pipe and a link to a device called ``.pdf``, a
sparse 256 GB file that is no PDF, a folder the (unprivileged) user may not read, a file cut
short while it is being parsed, file names holding terminal escape sequences. Each costs at most
the file itself, says why, and never stops the batch; the commands that could hang run as
subprocesses with a deadline so that a regression fails instead of blocking the suite.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fixtures.pdfs import many_pages_pdf, paper_text, text_pdf

from engine.cli.progress_bar import ProgressBar, one_line, terminal_safe
from engine.importer import Importer, Outcome
from engine.ingest.pdf import file_hash
from engine.ingest.pipeline import IngestOptions, PdfParse
from engine.ingest.worker import ParsePool
from engine.progress import Progress
from engine.service import Engine
from engine.types import DocumentStatus

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file types, permissions and signals")


def quire(home: Path, *args: str, timeout: int = 120, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """`quire --home HOME ARGS...` in a fresh process (``prefix`` runs it through another command)."""
    return subprocess.run([*prefix, sys.executable, "-m", "engine.cli.main", "--home", str(home), *args],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=timeout, check=False, cwd=REPO)


def good_pdf(path: Path, topic: str) -> Path:
    return text_pdf(path, [paper_text(topic)])


def by_name(results: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {Path(str(r["path"])).name: r for r in results}


# --- discovery: link loops, pipes, devices, huge non-PDFs -----------------------------------


def test_symlink_loops_fail_alone_and_the_batch_goes_on(engine: Engine, tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    good = good_pdf(folder / "good.pdf", "link loops")
    (folder / "a.pdf").symlink_to(folder / "b.pdf")
    (folder / "b.pdf").symlink_to(folder / "a.pdf")

    results = list(engine.add_documents([folder, folder / "a.pdf"]))

    outcomes = {Path(r.path).name: r for r in results}
    assert outcomes["good.pdf"].outcome == Outcome.ADDED
    for name in ("a.pdf", "b.pdf"):
        assert outcomes[name].outcome == Outcome.FAILED
        assert "link loop" in outcomes[name].reason
    assert [d.path for d in engine.documents() if d.status == DocumentStatus.INDEXED] == [str(good.resolve())]


def test_a_fifo_or_a_device_named_pdf_is_refused_without_blocking(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    good_pdf(folder / "1-first.pdf", "pipes")
    os.mkfifo(folder / "2-pipe.pdf")  # nobody ever writes to it: reading it would wait forever
    (folder / "3-zeros.pdf").symlink_to("/dev/zero")  # endless bytes: hashing it would never end
    good_pdf(folder / "4-last.pdf", "devices")

    done = quire(tmp_path / "home", "ingest", "--no-embed", "--json", str(folder))

    assert done.returncode == 0, done.stderr
    results = by_name(json.loads(done.stdout))
    assert results["1-first.pdf"]["outcome"] == results["4-last.pdf"]["outcome"] == "added"
    assert results["2-pipe.pdf"]["outcome"] == "failed" and "named pipe" in str(results["2-pipe.pdf"]["reason"])
    assert results["3-zeros.pdf"]["outcome"] == "failed" and "device" in str(results["3-zeros.pdf"]["reason"])


def test_a_huge_file_that_is_no_pdf_is_refused_from_its_first_bytes(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    huge = folder / "backup.pdf"
    with huge.open("wb") as handle:  # 256 GB on paper, a few KiB on disk: hashing it would take hours
        handle.write(b"PK\x03\x04 this is a zip archive, not a paper\n")
        handle.truncate(256 << 30)

    done = quire(tmp_path / "home", "ingest", "--no-embed", "--json", str(folder))

    [result] = json.loads(done.stdout)
    assert result["outcome"] == "failed" and "not a PDF" in result["reason"] and "ZIP" in result["reason"]


# --- permissions: root reads everything, so it runs without the capabilities that let it -------


def _bound_by_permissions() -> tuple[str, ...]:
    """A command prefix under which file permission bits apply (to root too), or a skip."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    dropped = "-dac_override,-dac_read_search"
    if setpriv is None or subprocess.run([setpriv, f"--bounding-set={dropped}", "true"], capture_output=True,
                                         check=False).returncode:
        pytest.skip("running as root without setpriv (util-linux) to drop CAP_DAC_OVERRIDE: permission bits "
                    "would stop nothing")
    return (setpriv, f"--inh-caps={dropped}", f"--bounding-set={dropped}", "--")


@pytest.fixture
def locked_folder(tmp_path: Path) -> Iterator[Path]:
    locked = tmp_path / "papers" / "locked"
    locked.mkdir(parents=True)
    good_pdf(locked / "hidden.pdf", "locked folders")
    locked.chmod(0)
    try:
        yield locked
    finally:
        locked.chmod(0o755)  # so that pytest can clean up


def test_unreadable_folders_and_paths_are_reported_not_skipped_or_fatal(tmp_path: Path, locked_folder: Path) -> None:
    papers = locked_folder.parent
    good = good_pdf(papers / "readable.pdf", "permissions")

    done = quire(tmp_path / "home", "ingest", "--no-embed", "--json", str(papers),
                 str(locked_folder / "hidden.pdf"), prefix=_bound_by_permissions())

    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    outcomes = {str(r["path"]): r for r in json.loads(done.stdout)}
    assert outcomes[str(good)]["outcome"] == "added"
    folder_result = outcomes[str(locked_folder)]
    assert folder_result["outcome"] == "failed" and "may not read this folder" in str(folder_result["reason"])
    named = outcomes[str(locked_folder / "hidden.pdf")]
    assert named["outcome"] == "failed" and "may not read" in str(named["reason"])


# --- a file that changes while it is parsed ---------------------------------------------------


def _truncate_at_page(path: Path, page: int) -> Callable[[Progress], None]:
    def progress(update: Progress) -> None:
        if update.stage == "parse" and update.done == page and path.stat().st_size > 4096:
            with path.open("r+b") as handle:
                handle.truncate(path.stat().st_size // 3)  # a copy or download overwritten mid-read

    return progress


@pytest.mark.parametrize("workers", [0, 1], ids=["in-process", "worker"])
def test_a_file_truncated_while_parsed_is_not_stored_as_complete(engine: Engine, tmp_path: Path,
                                                                 workers: int) -> None:
    paper = many_pages_pdf(tmp_path / "long.pdf", 60)
    importer = Importer(engine.library, IngestOptions(parse_workers=workers))

    [result] = list(importer.add([paper], progress=_truncate_at_page(paper, 5)))

    assert result.outcome == Outcome.FAILED and "changed while Quire was reading it" in result.reason
    assert [d.status for d in engine.documents()] == [DocumentStatus.FAILED]
    # Run again on what is there now: still one record for the file, failed, never a second one beside it.
    [again] = list(Importer(engine.library, IngestOptions(parse_workers=workers)).add([paper]))
    assert again.outcome == Outcome.FAILED
    assert [d.status for d in engine.documents()] == [DocumentStatus.FAILED]
    assert engine.library.check_integrity() == []


# --- the page time limit times the worker, not the caller --------------------------------------


def _parse_in_process(path: Path) -> list[str]:
    with PdfParse(path, IngestOptions()) as parse:
        return [passage.text for passage in parse.passages()]


@pytest.mark.parametrize("worker_stopped_too", [False, True], ids=["caller-busy", "ctrl-z"])
def test_a_caller_that_stops_listening_does_not_fail_a_good_pdf(tmp_path: Path, worker_stopped_too: bool) -> None:
    paper = many_pages_pdf(tmp_path / "long.pdf", 40)
    with ParsePool(1, page_timeout=1.0) as pool:
        job = pool.submit(paper, IngestOptions(), file_hash(paper))
        assert job.worker is not None
        if worker_stopped_too:  # Ctrl-Z stops the whole process group, the workers with it
            os.kill(job.worker.process.pid, signal.SIGSTOP)
        time.sleep(3.0)  # the caller hashes a huge file, or is stopped: three page time limits go by
        if worker_stopped_too:
            os.kill(job.worker.process.pid, signal.SIGCONT)
        job.wait_meta()
        streamed = [passage.text for passage in job.passages()]
    assert streamed == _parse_in_process(paper)


# --- what the terminal and the exit code say ----------------------------------------------------


def test_escape_sequences_in_file_names_never_reach_the_terminal(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    good_pdf(folder / "\x1b[2J\x1b]0;owned\x07clear.pdf", "escapes")
    (folder / "\x1b[31mred\x9b1mnot.pdf").write_text("plain text, not a PDF")
    home = tmp_path / "home"

    ingest = quire(home, "ingest", "--no-embed", str(folder))
    listing = quire(home, "library", "list")

    for done in (ingest, listing):
        shown = done.stdout + done.stderr
        assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown, shown
    assert "\\x1b[2J\\x1b]0;owned\\x07clear.pdf" in ingest.stdout
    assert "failed" in ingest.stdout and "\\x1b[31mred\\x9b1mnot.pdf" in ingest.stdout


def test_bidi_overrides_and_line_separators_in_file_names_are_shown_escaped(tmp_path: Path) -> None:
    """U+202E would show "invoice\u202efdp.exe.pdf" as "invoicefdp.exe" read backwards; U+2028 breaks the line."""
    folder = tmp_path / "papers"
    folder.mkdir()
    good_pdf(folder / "invoice\u202efdp.exe.pdf", "overrides")
    good_pdf(folder / "two\u2028lines\u2029here\u2066.pdf", "separators")
    home = tmp_path / "home"

    ingest = quire(home, "ingest", "--no-embed", str(folder))
    listing = quire(home, "library", "list")

    for done in (ingest, listing):
        shown = done.stdout + done.stderr
        for raw in ("\u202e", "\u2028", "\u2029", "\u2066"):
            assert raw not in shown, ascii(shown)
    assert "invoice\\u202efdp.exe.pdf" in ingest.stdout, ascii(ingest.stdout)
    assert "two\\u2028lines\\u2029here\\u2066.pdf" in ingest.stdout, ascii(ingest.stdout)
    assert terminal_safe("日本") == "日本" and terminal_safe("é\u200d") == "é\u200d"  # real text is left alone


def test_a_newline_in_a_file_name_cannot_forge_a_result_line(tmp_path: Path) -> None:
    """``x.pdf\nadded      trusted.pdf  [0000] Real Paper`` would print a second, fake "added" line."""
    folder = tmp_path / "papers"
    folder.mkdir()
    forged = "x.pdf\nadded      trusted.pdf  [0000] Real Paper\r.pdf"
    good_pdf(folder / forged, "forged lines")
    (folder / "bad\nfailed     other.pdf").write_text("not a PDF")
    home = tmp_path / "home"

    ingest = quire(home, "ingest", "--no-embed", str(folder))
    listing = quire(home, "library", "list")

    lines = ingest.stdout.splitlines()
    assert len(lines) == 2, ingest.stdout  # one line per file, whatever their names hold
    assert not any(line.startswith("added      trusted.pdf") for line in lines), ingest.stdout
    assert not any(line.startswith("failed     other.pdf") for line in lines), ingest.stdout
    assert "x.pdf\\x0aadded      trusted.pdf  [0000] Real Paper\\x0d.pdf" in ingest.stdout, ingest.stdout
    assert "bad\\x0afailed     other.pdf" in ingest.stdout, ingest.stdout
    for done in (ingest, listing):
        assert "\r" not in done.stdout + done.stderr, ascii(done.stdout)
    listed = listing.stdout.splitlines()  # the paper and the failed file, each one line starting with its id
    assert len(listed) == 2 and all(re.match(r"[0-9a-f]{16}  ", line) for line in listed), listing.stdout
    assert one_line("two\nlines") == "two\\x0alines" and terminal_safe("two\nlines") == "two\nlines"


def test_ingest_exits_non_zero_when_every_file_failed(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "notes.pdf").write_text("not a PDF")
    (folder / "empty.pdf").write_bytes(b"")
    home = tmp_path / "home"

    all_failed = quire(home, "ingest", "--no-embed", str(folder))
    good_pdf(folder / "real.pdf", "exit codes")
    some_failed = quire(home, "ingest", "--no-embed", str(folder))

    assert all_failed.returncode == 1, all_failed.stderr
    assert "2 failed" in all_failed.stderr
    assert some_failed.returncode == 0, some_failed.stderr


def test_ingest_of_a_folder_without_pdfs_exits_non_zero(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("no PDF here")
    done = quire(tmp_path / "home", "ingest", "--no-embed", str(empty))
    assert done.returncode == 1, done.stderr
    assert "no PDF files found in" in done.stderr and str(empty) in done.stderr
    assert "Traceback" not in done.stderr


def test_output_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """``quire library list --json | head -c 600``: the reader is gone before Quire writes a byte."""
    home = tmp_path / "home"
    good_pdf(tmp_path / "paper.pdf", "closed pipes")
    assert quire(home, "ingest", "--no-embed", str(tmp_path / "paper.pdf")).returncode == 0
    for command in (("library", "list", "--json"), ("library", "list"), ("search", "closed pipes")):
        reader, writer = os.pipe()
        os.close(reader)  # like `head` that has read all it wants and exited
        try:
            done = subprocess.run([sys.executable, "-m", "engine.cli.main", "--home", str(home), *command],
                                  stdout=writer, stderr=subprocess.PIPE, text=True, timeout=120, check=False,
                                  cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
        finally:
            os.close(writer)
        assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
        assert done.returncode == 141, (command, done.returncode, done.stderr)


def test_the_progress_bar_shows_escapes_in_file_names_as_text() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    bar = ProgressBar(terminal)
    bar(Progress("ingest", 0, 2, "\x1b]0;owned\x07\x1b[2Jpaper.pdf"))
    bar(Progress("parse", 1, 3, "\x1b]0;owned\x07\x1b[2Jpaper.pdf"))
    drawn = terminal.getvalue()
    assert "\x1b" not in drawn and "\x07" not in drawn
    assert "\\x1b]0;owned\\x07\\x1b[2Jpaper.pdf" in drawn
