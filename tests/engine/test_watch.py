"""Watched folders on real folders: real PDFs (PyMuPDF), real file events (watchdog), no mocked watcher."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf

from engine.errors import Cancelled, WatchError
from engine.progress import CancelToken
from engine.service import Engine
from engine.store.edits import set_collections
from engine.types import DocumentStatus, Outcome
from engine.watch import SyncReport

PAST = time.time() - 3600  # a file written an hour ago is complete


def _paper(path: Path, word: str, *, settled: bool = True) -> Path:
    """A one-page PDF about ``word`` (a word no other test paper holds)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text_pdf(path, [f"A study of {word}.\n" + paper_text(word, 1)])
    if settled:
        os.utime(path, (PAST, PAST))
    return path


def _found(engine: Engine, word: str) -> set[str]:
    hits = engine.search(word, k=5, source="library", rewrite=False, rerank="none", spelling=False,
                         lexical_only=True)
    return {hit.doc_id for hit in hits if word in hit.text.lower()}


@pytest.fixture
def folder(tmp_path: Path, engine: Engine) -> Path:
    watched = tmp_path / "papers"
    watched.mkdir()
    engine.watch_folder(watched)
    return watched


def _outcomes(report: SyncReport) -> dict[str, Outcome]:
    return {Path(result.path).name: result.outcome for result in report.results}


def test_a_new_pdf_is_ingested_and_searchable(engine: Engine, folder: Path) -> None:
    _paper(folder / "sub" / "one.pdf", "zeolites")
    report = engine.sync_watched()
    assert _outcomes(report) == {"one.pdf": Outcome.ADDED}
    [document] = engine.documents()
    assert _found(engine, "zeolites") == {document.id}
    assert engine.sync_watched().results == []  # a second pass has nothing to do


def test_partial_hidden_and_lock_files_are_ignored(engine: Engine, folder: Path) -> None:
    for name in ("paper.pdf.part", "paper.pdf.crdownload", "~$paper.pdf", ".hidden.pdf", ".cache/inner.pdf"):
        _paper(folder / name, "ignored")
    _paper(folder / "real.pdf", "kept")
    assert _outcomes(engine.sync_watched()) == {"real.pdf": Outcome.ADDED}


def test_a_changed_pdf_is_a_new_version_keeping_edits_and_collections(engine: Engine, folder: Path) -> None:
    path = _paper(folder / "paper.pdf", "perovskites")
    engine.sync_watched()
    [old] = engine.documents()
    engine.update_metadata(old.id, title="My corrected title")
    set_collections(engine.library, old.id, ["Solar"], "zotero")

    _paper(path, "photovoltaics")  # new content under the same name
    os.utime(path, (PAST + 60, PAST + 60))
    report = engine.sync_watched()
    assert _outcomes(report) == {"paper.pdf": Outcome.UPDATED}
    [new] = engine.documents()
    assert new.id != old.id and new.bib.title == "My corrected title" and new.collections == ("Solar",)
    assert _found(engine, "photovoltaics") == {new.id} and _found(engine, "perovskites") == set()


def test_a_moved_or_renamed_pdf_keeps_its_identity(engine: Engine, folder: Path) -> None:
    path = _paper(folder / "draft.pdf", "graphene")
    engine.sync_watched()
    [before] = engine.documents()
    moved = folder / "read" / "graphene-final.pdf"
    moved.parent.mkdir()
    path.rename(moved)
    report = engine.sync_watched()
    assert report.moved == [(str(path), str(moved))] and report.missing == []
    [after] = engine.documents()
    assert after.id == before.id and after.path == str(moved)
    assert engine.library.file_paths(after.id) == [str(moved)]


def test_a_deleted_pdf_is_missing_until_pruned(engine: Engine, folder: Path, tmp_path: Path) -> None:
    path = _paper(folder / "gone.pdf", "mycorrhiza")
    _paper(folder / "stays.pdf", "lichens")
    engine.sync_watched()
    kept = tmp_path / "kept-aside.pdf"
    shutil.move(path, kept)

    report = engine.sync_watched()
    assert report.missing == [str(path)]
    assert len(engine.documents()) == 2  # shown as missing, not purged
    [gone] = engine.missing_files()
    assert gone.path == str(path) and _found(engine, "mycorrhiza") == {gone.doc_id}
    assert engine.sync_watched().missing == []  # reported once

    shutil.move(kept, path)  # back again: no longer missing
    assert engine.sync_watched().returned == [str(path)] and engine.missing_files() == []

    path.unlink()
    engine.sync_watched()
    report = engine.sync_watched(prune=True)
    assert report.pruned == [str(path)]
    assert [Path(d.path).name for d in engine.documents()] == ["stays.pdf"]
    assert engine.missing_files() == []


def test_a_half_written_file_waits_until_complete(engine: Engine, folder: Path, tmp_path: Path) -> None:
    whole = _paper(tmp_path / "staging" / "download.pdf", "diatoms").read_bytes()
    target = folder / "download.pdf"
    with target.open("wb") as out:
        out.write(whole[: len(whole) // 2])
        out.flush()
        report = engine.sync_watched(settle_s=2.0)
        assert report.waiting == [str(target)] and report.results == []
        assert report.retry_after is not None and 0 < report.retry_after <= 2.1
        out.write(whole[len(whole) // 2:])
    assert engine.sync_watched(settle_s=2.0).results == []  # just finished: still settling
    time.sleep(2.1)
    report = engine.sync_watched(settle_s=2.0)
    assert _outcomes(report) == {"download.pdf": Outcome.ADDED}
    assert [d.status for d in engine.documents()] == [DocumentStatus.INDEXED]


def test_an_unavailable_folder_is_reported_once_and_nothing_is_removed(engine: Engine, folder: Path,
                                                                        tmp_path: Path) -> None:
    _paper(folder / "a.pdf", "basalt")
    engine.sync_watched()
    unmounted = tmp_path / "elsewhere"
    folder.rename(unmounted)  # a disk unmounted, a share gone

    report = engine.sync_watched()
    assert [where for where, _ in report.unavailable] == [str(folder)]
    assert "not there" in report.unavailable[0][1]
    assert engine.sync_watched().unavailable == []  # reported once
    assert engine.watched_folders()[0].unavailable
    assert len(engine.documents()) == 1 and engine.missing_files() == []
    assert engine.sync_watched(prune=True).pruned == []

    unmounted.rename(folder)
    report = engine.sync_watched()
    assert report.available_again == [str(folder)] and report.missing == [] and report.results == []
    assert len(engine.documents()) == 1


def test_a_pdf_that_cannot_be_parsed_fails_once(engine: Engine, folder: Path) -> None:
    broken = folder / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 200)
    os.utime(broken, (PAST, PAST))
    report = engine.sync_watched()
    assert _outcomes(report) == {"broken.pdf": Outcome.FAILED} and report.results[0].reason
    assert engine.sync_watched().results == []  # not retried in a loop
    [failed] = engine.documents()
    assert failed.status == DocumentStatus.FAILED
    broken.unlink()  # a failure deleted is simply forgotten, never "missing"
    assert engine.sync_watched().missing == [] and engine.documents() == []


def test_folders_that_cannot_be_watched_are_refused_clearly(engine: Engine, folder: Path, tmp_path: Path) -> None:
    a_file = _paper(tmp_path / "single.pdf", "quartz")
    with pytest.raises(WatchError, match="is a file, not a folder"):
        engine.watch_folder(a_file)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(WatchError, match="link loop"):
        engine.watch_folder(loop)
    inner = folder / "inner"
    inner.mkdir()
    with pytest.raises(WatchError, match="inside the watched folder"):
        engine.watch_folder(inner)
    with pytest.raises(WatchError, match="holds the watched folder"):
        engine.watch_folder(tmp_path)
    with pytest.raises(WatchError, match="does not exist"):
        engine.watch_folder(tmp_path / "nowhere")
    assert [f.path for f in engine.watched_folders()] == [str(folder)]


def test_a_link_loop_inside_a_watched_folder_does_not_trap_the_pass(engine: Engine, folder: Path) -> None:
    (folder / "sub").mkdir()
    (folder / "sub" / "back").symlink_to(folder, target_is_directory=True)
    (folder / "self.pdf").symlink_to(folder / "self.pdf")
    _paper(folder / "sub" / "real.pdf", "olivine")
    assert _outcomes(engine.sync_watched()) == {"real.pdf": Outcome.ADDED}


@pytest.fixture
def following(engine: Engine) -> Iterator[Callable[[Callable[[list[SyncReport]], bool], float], list[SyncReport]]]:
    """Follow the watched folders on a thread, with an Engine of its own (an engine is used from one thread)."""
    reports: list[SyncReport] = []
    stop = CancelToken()
    started = threading.Event()

    def run() -> None:
        with Engine(home=engine.paths.home) as own:
            def heard(report: SyncReport) -> None:
                reports.append(report)
                started.set()
            own.follow_watched(stop, heard, settle_s=0.5)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(30), "the first catch-up pass did not finish"

    def until(done: Callable[[list[SyncReport]], bool], timeout: float) -> list[SyncReport]:
        deadline = time.monotonic() + timeout
        while not done(reports) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert done(reports), f"not reached within {timeout} s: {reports[-3:]}"
        return reports

    yield until
    stop.cancel()
    thread.join(10)
    assert not thread.is_alive()


def _added(reports: list[SyncReport]) -> list[str]:
    return [r.path for report in reports for r in report.results if r.outcome == Outcome.ADDED]


def test_live_events_bring_a_saved_pdf_in(engine: Engine, folder: Path, following) -> None:  # type: ignore[no-untyped-def]
    _paper(folder / "live.pdf", "stromatolites", settled=False)
    following(lambda reports: bool(_added(reports)), 30)
    assert _found(engine, "stromatolites")
    (folder / "live.pdf").unlink()
    following(lambda reports: any(report.missing for report in reports), 30)
    assert len(engine.missing_files()) == 1


@pytest.mark.slow
def test_a_burst_of_200_files_each_once(engine: Engine, folder: Path, tmp_path: Path, following) -> None:  # type: ignore[no-untyped-def]
    staging = tmp_path / "staging"
    for n in range(200):
        _paper(staging / f"paper{n:03}.pdf", f"burstword{n:03}")
    for source in sorted(staging.iterdir()):
        shutil.copy2(source, folder / source.name)  # copy2 keeps the hour-old times: complete at once
    following(lambda reports: len(set(_added(reports))) == 200, 300)
    documents = engine.documents()
    assert len(documents) == 200 and {Path(d.path).name for d in documents} == {f"paper{n:03}.pdf" for n in range(200)}
    assert all(d.status == DocumentStatus.INDEXED for d in documents)


@pytest.mark.slow
def test_a_cancelled_pass_keeps_what_it_stored_and_the_next_one_does_the_rest(engine: Engine, folder: Path) -> None:
    for n in range(8):
        _paper(folder / f"p{n}.pdf", f"cancelword{n}")
    cancel = CancelToken()
    seen: list[tuple[int, int]] = []

    def progress(report) -> None:  # type: ignore[no-untyped-def]
        if report.stage == "ingest":  # "n of N" files, as the app's progress bar shows it
            seen.append((report.done, report.total))
            if report.done >= 3:
                cancel.cancel()

    with pytest.raises(Cancelled):
        engine.sync_watched(progress=progress, cancel=cancel)
    stored = len(engine.documents())
    assert 0 < stored < 8 and seen and all(total == 8 for _, total in seen)
    report = engine.sync_watched()
    assert len(report.results) == 8 - stored
    assert sorted(Path(d.path).name for d in engine.documents()) == [f"p{n}.pdf" for n in range(8)]
