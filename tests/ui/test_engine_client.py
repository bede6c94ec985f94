"""EngineClient: one serial worker, signals on the UI thread, throttled progress, no swallowed errors."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf
from PySide6.QtCore import QThread
from pytestqt.qtbot import QtBot

from engine.config import resolve_paths
from engine.embed import HashingEmbedder
from engine.importer import IngestResult, Outcome
from engine.progress import Progress
from engine.request import AskRequest, Scope
from engine.service import Engine
from engine.types import Answer
from ui.engine_client import EngineClient
from ui.engine_tasks import ProgressThrottle, describe_failures

TIMEOUT_MS = 60_000


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_throttle_drops_pages_in_between_but_keeps_each_stage_start_and_end() -> None:
    clock, forwarded = FakeClock(), []
    throttle = ProgressThrottle(forwarded.append, interval=0.1, clock=clock)
    reports = [Progress("ingest", 0, 2, "a.pdf")] + [Progress("parse", page, 50, "a.pdf") for page in range(1, 51)]

    for report in reports:
        throttle(report)
        clock.now += 0.01  # 100 reports a second: ten times what the bar needs

    assert forwarded[0] == reports[0]  # a new file shows at once
    assert forwarded[1] == reports[1]  # so does its first page
    assert forwarded[-1] == reports[-1]  # and the last page: the bar never stops short
    assert len(forwarded) <= 2 + 50 // 10 + 1


def test_throttle_passes_everything_when_reports_are_slow() -> None:
    clock, forwarded = FakeClock(), []
    throttle = ProgressThrottle(forwarded.append, interval=0.1, clock=clock)
    for page in range(1, 6):
        throttle(Progress("parse", page, 10))
        clock.now += 0.5
    assert [report.done for report in forwarded] == [1, 2, 3, 4, 5]


def test_failures_are_described_by_file_name_and_reason() -> None:
    failures = [IngestResult(f"/papers/{n}.txt", Outcome.FAILED, reason="this is not a PDF") for n in range(10)]
    message = describe_failures(failures, limit=3)
    headline, details = message.split("\n\n")
    assert headline == "10 files could not be added:"
    assert details.splitlines()[0] == "0.txt: this is not a PDF"
    assert "7 more" in details.splitlines()[-1]
    assert describe_failures(failures[:1]).startswith("This file could not be added:")


def test_signals_arrive_on_the_ui_thread_and_busy_brackets_the_work(qtbot: QtBot, client: EngineClient,
                                                                      corpus_papers: Path) -> None:
    ui_thread = QThread.currentThread()
    seen_threads: set[bool] = set()
    busy: list[bool] = []
    client.busy_changed.connect(busy.append)
    client.progress.connect(lambda *_: seen_threads.add(QThread.currentThread() == ui_thread))
    client.ingest_result.connect(lambda _: seen_threads.add(QThread.currentThread() == ui_thread))
    client.documents_changed.connect(lambda _: seen_threads.add(QThread.currentThread() == ui_thread))

    with qtbot.waitSignal(client.ingesting_changed, timeout=TIMEOUT_MS, check_params_cb=lambda on: not on):
        client.add_paths([corpus_papers / "N18-3011.pdf"])
        client.refresh()  # queued behind the ingestion, on the same worker

    qtbot.waitUntil(lambda: not client.busy, timeout=TIMEOUT_MS)
    assert seen_threads == {True}
    assert busy == [True, False]


def test_results_and_documents_come_in_order(qtbot: QtBot, client: EngineClient, corpus_papers: Path) -> None:
    events: list[str] = []
    client.ingest_result.connect(lambda result: events.append(f"result:{result.outcome}"))
    client.documents_changed.connect(lambda documents: events.append(f"documents:{len(documents)}"))
    client.ingesting_changed.connect(lambda on: events.append(f"ingesting:{on}"))

    client.add_paths([corpus_papers / "N18-3011.pdf", corpus_papers / "P14-1059.pdf"])
    qtbot.waitUntil(lambda: not client.busy, timeout=TIMEOUT_MS)

    assert events[0] == "ingesting:True"
    assert events.count("result:added") == 2
    assert events[-2:] == ["documents:2", "ingesting:False"]  # the table is current when the batch ends


class ExplodingEngine:
    """Stands in for the engine only where the engine is beside the point: a bug inside a call."""

    def __init__(self, home: Path) -> None:
        self.paths = resolve_paths(home)
        self.settings_notice = ""  # its settings were read
        self.closed = False

    def documents(self) -> list[object]:
        raise RuntimeError("catalog exploded")

    def close(self) -> None:
        self.closed = True


def test_an_unexpected_exception_in_the_worker_becomes_an_error_signal(qtbot: QtBot, tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    engine = ExplodingEngine(tmp_path)
    client = EngineClient(engine, quick_engine=ExplodingEngine(tmp_path))  # type: ignore[arg-type]
    try:
        with qtbot.waitSignal(client.error, timeout=TIMEOUT_MS) as raised:
            client.refresh()
        assert "RuntimeError: catalog exploded" in raised.args[0]
        assert "Unexpected error in refresh" in caplog.text  # with its traceback, for the bug report
        qtbot.waitUntil(lambda: not client.busy, timeout=TIMEOUT_MS)
    finally:
        client.shutdown()
    assert engine.closed


def test_shutdown_cancels_a_running_batch_and_is_idempotent(qtbot: QtBot, client: EngineClient,
                                                            corpus_papers: Path) -> None:
    client.add_paths([corpus_papers])
    with qtbot.waitSignal(client.ingesting_changed, timeout=TIMEOUT_MS, check_params_cb=lambda on: not on):
        client.shutdown()
    client.shutdown()
    client.refresh()  # ignored after shutdown rather than queued on a dead thread
    assert not client.busy and not client.ingesting


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")
def test_engine_work_runs_at_a_lower_priority_than_the_ui(qtbot: QtBot, client: EngineClient) -> None:
    def niceness(_engine: object) -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    seen: list[int] = []
    client.call("probe", niceness, seen.append)
    qtbot.waitUntil(lambda: bool(seen), timeout=TIMEOUT_MS)
    assert seen[0] > os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def _offline(engine: Engine) -> Engine:
    """Deterministic embedders, so a digest answer needs no model download or load."""
    engine.__dict__["embedder"] = HashingEmbedder()
    engine.__dict__["support_embedder"] = HashingEmbedder()
    return engine


def test_an_answer_is_saved_once_by_the_engine_with_the_scope_the_user_named(qtbot: QtBot, tmp_path: Path) -> None:
    engine = _offline(Engine(tmp_path / "home"))
    pdf = text_pdf(tmp_path / "corona.pdf", [paper_text("protein corona on lipid nanoparticles", 4)])
    assert next(iter(engine.add_documents([pdf]))).doc_id
    client = EngineClient(engine)
    answers: list[Answer] = []
    try:
        client.ask(AskRequest("How do proteins adsorb on lipid nanoparticles?", mode="digest",
                              scope=Scope(source="library", label="Library")), answers.append)
        qtbot.waitUntil(lambda: bool(answers) and not client.busy, timeout=TIMEOUT_MS)
        history = engine.answers()
        assert [summary.id for summary in history] == [answers[0].id]  # one entry: the engine saved it
        assert dict(engine.answer(answers[0].id).settings)["scope"] == "Library"
    finally:
        client.shutdown()


def test_a_request_the_engine_refuses_reaches_the_error_signal(qtbot: QtBot, tmp_path: Path) -> None:
    client = EngineClient(_offline(Engine(tmp_path / "home")))
    failed: list[bool] = []
    try:
        with qtbot.waitSignal(client.error, timeout=TIMEOUT_MS) as raised:
            client.ask(AskRequest("How do coronas form?", scope=Scope(source="pes2o")), lambda _a: None,
                       on_failure=lambda: failed.append(True))
        assert "Unknown search source 'pes2o'" in raised.args[0]
        qtbot.waitUntil(lambda: bool(failed) and not client.busy, timeout=TIMEOUT_MS)
    finally:
        client.shutdown()
