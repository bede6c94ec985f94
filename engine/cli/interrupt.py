"""Run a long engine call so that Ctrl+C stops it cleanly instead of killing it mid-write."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from engine.progress import CancelToken

T = TypeVar("T")


def run_cancellable(work: Callable[[], T], cancel: CancelToken, name: str, stopping: str) -> T:
    """``work()`` on a worker thread; the main thread waits where Python can see Ctrl+C, then sets
    ``cancel`` (printing ``stopping``) and waits for the engine to stop at its next check, so what it
    finished is kept. The worker's exception, if any, is raised here."""
    result: dict[str, T] = {}
    error: list[BaseException] = []

    # Waited on through an Event, not Thread.join: on CPython 3.11 a join that Ctrl+C interrupts left the
    # thread looking finished, and the caller read a result not yet written (tests/engine/test_cli_interrupt.py).
    done = threading.Event()

    def run() -> None:
        try:
            result["value"] = work()
        except BaseException as exc:  # handed to the main thread, which reports it
            error.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, name=name, daemon=True).start()
    try:
        while not done.wait(0.2):
            pass
    except KeyboardInterrupt:
        print(f"\n… {stopping}", file=sys.stderr, flush=True)
        cancel.cancel()
        done.wait()
    if error:
        raise error[0]
    return result["value"]
