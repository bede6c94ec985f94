"""Ctrl+C during a long CLI command: the engine is told to stop and what it finished is returned."""

from __future__ import annotations

import _thread
import time

import pytest

from engine.cli.interrupt import run_cancellable
from engine.progress import CancelToken


def test_ctrl_c_cancels_the_work_and_keeps_what_it_returns(capsys: pytest.CaptureFixture[str]) -> None:
    cancel = CancelToken()

    def work() -> str:
        time.sleep(0.5)  # the main thread is waiting by then
        _thread.interrupt_main()  # what Ctrl+C does to the waiting main thread
        deadline = time.monotonic() + 60  # generous: on a loaded machine the main thread may be slow to run
        while not cancel.cancelled and time.monotonic() < deadline:
            time.sleep(0.01)
        return "partial" if cancel.cancelled else "never told to stop"

    assert run_cancellable(work, cancel, "test", "stopping (kept)") == "partial"
    assert "… stopping (kept)" in capsys.readouterr().err


def test_the_works_error_reaches_the_caller() -> None:
    def work() -> str:
        raise ValueError("no such paper")

    with pytest.raises(ValueError, match="no such paper"):
        run_cancellable(work, CancelToken(), "test", "stopping")
