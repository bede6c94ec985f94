"""Ctrl+C during a long CLI command: the engine is told to stop and what it finished is returned."""

from __future__ import annotations

import _thread
import signal
import time

import pytest

from engine.cli.interrupt import run_cancellable
from engine.progress import CancelToken


def test_ctrl_c_cancels_the_work_and_keeps_what_it_returns(capsys: pytest.CaptureFixture[str]) -> None:
    cancel = CancelToken()

    def work() -> str:
        deadline = time.monotonic() + 60
        while not cancel.cancelled and time.monotonic() < deadline:
            time.sleep(0.5)  # the main thread is waiting by then
            _thread.interrupt_main()  # what Ctrl+C does to the waiting main thread
            # Pressed again only if that press was lost, as it was twice on a machine loaded eight deep.
            pressed = time.monotonic()
            while not cancel.cancelled and time.monotonic() < pressed + 5:
                time.sleep(0.01)
        return "partial" if cancel.cancelled else "never told to stop"

    # Python's own Ctrl+C handler for the test's length: interrupt_main does nothing while SIGINT is
    # ignored or left to the system, as it may be after other code in the same test process.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert run_cancellable(work, cancel, "test", "stopping (kept)") == "partial"
    finally:
        signal.signal(signal.SIGINT, previous)
    assert "… stopping (kept)" in capsys.readouterr().err


def test_the_works_error_reaches_the_caller() -> None:
    def work() -> str:
        raise ValueError("no such paper")

    with pytest.raises(ValueError, match="no such paper"):
        run_cancellable(work, CancelToken(), "test", "stopping")
