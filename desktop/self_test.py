"""``quire-desktop --self-test``: the whole app, end to end, on the bundled demo papers.

It builds the real window and engine client on a temporary library, adds the demo papers the
way a drop would, and checks that the library table lists every one of them, indexed, with a
title. Packagers run it inside a fresh bundle to prove the bundle works.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QEventLoop, QSettings, QTimer
from PySide6.QtWidgets import QApplication

from engine.demo import demo_papers
from engine.service import Engine
from ui.engine_client import EngineClient
from ui.library_model import Column
from ui.main_window import MainWindow


def run_self_test(app: QApplication, stall_s: float = 300.0) -> int:
    """Return 0 when the window lists every demo paper, else print what went wrong and return 1.

    It fails when the work stops moving for ``stall_s`` seconds, not after a total time: on a
    loaded small machine the same work may take several times as long and still be fine.
    """
    del app  # only needs to exist; taken to make that dependency explicit
    papers = demo_papers()
    if not papers:
        print("self-test FAILED: no demo papers are bundled (resources/demo is empty)", file=sys.stderr)
        return 1
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="quire-self-test-") as home:
        client = EngineClient(Engine(home))
        try:
            window = MainWindow(client, QSettings(str(Path(home) / "window.ini"), QSettings.Format.IniFormat),
                                progress_delay_ms=0)
            problems: list[str] = []
            client.error.connect(problems.append)
            window.show()
            finished = _ingest_and_wait(client, window, [str(p) for p in papers], stall_s)
            if not finished:
                problems.append(f"ingestion made no progress for {stall_s:.0f} s")
            problems.extend(_check_table(window, len(papers)))
            window.close()
        finally:
            client.shutdown()
    elapsed = time.perf_counter() - started
    if problems:
        print("self-test FAILED:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print(f"self-test passed: {len(papers)} demo papers ingested and listed in {elapsed:.1f} s")
    return 0


def _ingest_and_wait(client: EngineClient, window: MainWindow, paths: list[str], stall_s: float) -> bool:
    loop = QEventLoop()
    stalled = QTimer()
    stalled.setSingleShot(True)
    stalled.setInterval(int(stall_s * 1000))
    stalled.timeout.connect(loop.quit)
    # Every report of progress (a page read, a batch embedded, a file stored) restarts the clock.
    client.progress.connect(lambda *_: stalled.start())
    client.ingest_result.connect(lambda _: stalled.start())
    # Wait for the background embedding too: a paper counts as done once search by meaning finds it.
    client.busy_changed.connect(lambda busy: None if busy else loop.quit())
    stalled.start()
    window.add_paths(paths)
    loop.exec()
    return stalled.isActive()


def _check_table(window: MainWindow, expected: int) -> list[str]:
    view_model = window.table.model()
    rows = view_model.rowCount()
    problems = [] if rows == expected else [f"the library table shows {rows} rows, expected {expected}"]
    if window.stack.currentWidget() is not window.table:
        problems.append("the window still shows the empty state")
    for row in range(rows):
        title = view_model.index(row, Column.TITLE).data()
        status = view_model.index(row, Column.STATUS).data()
        pages = view_model.index(row, Column.PAGES).data()
        print(f"  {status:<8} {pages:>3} pages  {title}")
        if status != "Indexed" or not title or not pages:
            problems.append(f"row {row + 1} looks wrong: title={title!r} status={status!r} pages={pages!r}")
    return problems
