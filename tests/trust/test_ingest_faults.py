"""Faults during ingest: a parser that crashes or hangs on a file, a disk that fills up mid-batch.

Each fault costs at most the file it hit; what was stored before stays whole, and the next run
resumes. The crash and hang are real: the worker process parsing the file is sent SIGKILL or
SIGSTOP. The full disk is a real file size limit (RLIMIT_FSIZE) on a real `quire ingest`.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.pdfs import many_pages_pdf

from engine.importer import Importer, IngestResult, Outcome
from engine.ingest.pipeline import IngestOptions
from engine.progress import Progress
from engine.service import Engine

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and resource limits")


def _signal_worker_on_second_file(importer: Importer, files: list[Path], sig: int) -> list[IngestResult]:
    sent: list[int] = []

    def progress(update: Progress) -> None:
        # The second file's first page is being read: hit the worker that is reading it.
        if update.stage == "parse" and update.label == files[1].name and not sent:
            pool = importer._pool
            assert pool is not None
            for worker in pool._busy:
                if worker.job is not None and worker.job.path == files[1]:
                    os.kill(worker.process.pid, sig)
                    sent.append(worker.process.pid)

    results = list(importer.add(files, progress=progress))
    assert sent, "no worker was parsing the second file"
    return results


def _many_page_batch(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [many_pages_pdf(folder / f"{n}-long.pdf", 60) for n in range(3)]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSEGV], ids=["sigkill", "segfault"])
def test_parser_crash_costs_one_file_and_the_batch_goes_on(engine: Engine, tmp_path: Path, sig: int) -> None:
    files = _many_page_batch(tmp_path / "papers")
    importer = Importer(engine.library, IngestOptions(parse_workers=1, page_timeout=60))

    results = _signal_worker_on_second_file(importer, files, sig)

    assert [r.outcome for r in results] == [Outcome.ADDED, Outcome.FAILED, Outcome.ADDED]
    assert "crashed the parser" in results[1].reason
    assert engine.library.check_integrity() == []
    # The crash left nothing of the file behind but its failure; adding it again works.
    [again] = Importer(engine.library, IngestOptions(parse_workers=1)).add([files[1]])
    assert again.outcome == Outcome.ADDED and again.pages == 60


def test_hung_parser_is_killed_by_the_page_time_limit(engine: Engine, tmp_path: Path) -> None:
    files = _many_page_batch(tmp_path / "papers")
    importer = Importer(engine.library, IngestOptions(parse_workers=1, page_timeout=3))

    results = _signal_worker_on_second_file(importer, files, signal.SIGSTOP)  # frozen, as MuPDF in a loop

    assert [r.outcome for r in results] == [Outcome.ADDED, Outcome.FAILED, Outcome.ADDED]
    assert "took longer than 3 s" in results[1].reason
    assert engine.library.check_integrity() == []


def _limit_file_size(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.slow
def test_disk_full_during_ingest_is_a_clear_error_and_a_crash_free_catalog(tmp_path: Path, papers_dir: Path) -> None:
    first, rest = tmp_path / "first", tmp_path / "rest"
    first.mkdir()
    rest.mkdir()
    for name in ("mooney05.pdf", "bunescu-acl07.pdf"):
        shutil.copy(papers_dir / name, first / name)
    for name in ("smola10.pdf", "dyer12.pdf", "2203.00130v1.pdf", "fader11.pdf"):
        shutil.copy(papers_dir / name, rest / name)
    home = tmp_path / "home"
    with Engine(home) as engine:
        stored = {r.doc_id: r.passages for r in engine.add_documents([first])}
    catalog = home / "library.db"
    limit = catalog.stat().st_size + 64 * 1024  # room for a little more, not for a 39-page paper

    quire = [sys.executable, "-m", "engine.cli.main", "--home", str(home), "ingest", str(rest)]
    done = subprocess.run(quire, capture_output=True, text=True, timeout=600, check=False,
                          preexec_fn=lambda: _limit_file_size(limit))

    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "could not write to the library" in done.stderr and "disk may be full" in done.stderr
    with Engine(home) as engine:
        assert engine.library.check_integrity() == []
        for doc_id, passages in stored.items():
            assert len(engine.passages(doc_id)) == passages  # nothing stored before was lost
        # With space again, the same command resumes and finishes.
        results = list(engine.add_documents([rest, first]))
        assert {r.outcome for r in results} <= {Outcome.ADDED, Outcome.UNCHANGED}
        assert len(engine.documents()) == 6
        assert engine.library.check_integrity() == []
