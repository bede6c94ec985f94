"""The app shows the phases the CLI shows: after papers are added, embedding says how many passages of how many,
with the rate and time left once they are known (engine.progress.Pace, as on the CLI's line)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from pytestqt.qtbot import QtBot

from engine.progress import Pace
from ui.engine_client import EngineClient
from ui.main_window import MainWindow


def test_embedding_after_an_add_shows_counts_in_the_status_bar(qtbot: QtBot, window: MainWindow,
                                                               client: EngineClient,
                                                               titled_pdf: Callable[[str], Path]) -> None:
    window.resize(1366, 768)
    shown: list[str] = []
    # Connected after the window's own slot, so each report is read once the window has drawn it.
    client.progress.connect(
        lambda stage, *_: shown.append(window.embedding_status.text()) if stage == "embed" else None)
    with qtbot.waitSignal(client.embedding_finished, timeout=120_000):
        client.add_paths([titled_pdf("Retrieval Systems That Cite Their Passages")])
    drawn = re.compile(r"Embedding \d+(/\d+)? passages( · [\d.,]+/s)?( · \S+ left)?")
    assert shown and all(drawn.fullmatch(text) for text in shown), shown


def test_the_pace_gives_rate_and_time_left_once_the_stage_has_run() -> None:
    pace = Pace()
    pace.note("embed", 0)
    pace._started -= 10  # ten seconds into the stage
    assert pace.counts("embed", 40, 100, "passages") == "40/100 passages  4.0/s  15s left"
    assert pace.counts("import", 0, 2**20, size=True).startswith("0 B/1.0 MB")  # a new stage: no rate yet
