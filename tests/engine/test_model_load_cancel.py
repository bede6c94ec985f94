"""A Stop while the language model loads is answered at once; the load itself finishes in the
background (llama.cpp cannot stop half way), and its errors still reach the caller."""

from __future__ import annotations

import threading
import time

import pytest

from engine.errors import ModelNotFoundError
from engine.progress import CancelToken
from engine.service_ask import load_unless_cancelled


class SlowLoad:
    """A load that takes until ``release`` is set: what matters here is the waiting, not the model."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.finished = threading.Event()

    def __call__(self) -> object:
        self.release.wait(10)
        self.finished.set()
        return "model"


def test_a_stop_during_the_load_returns_at_once_and_the_load_finishes_later() -> None:
    load, cancel = SlowLoad(), CancelToken()
    threading.Timer(0.2, cancel.cancel).start()
    started = time.monotonic()
    assert load_unless_cancelled(load, cancel) is None  # type: ignore[arg-type]
    assert time.monotonic() - started < 1.0
    assert not load.finished.is_set()
    load.release.set()
    assert load.finished.wait(5)


def test_without_a_stop_the_model_and_the_loads_errors_come_back() -> None:
    load = SlowLoad()
    load.release.set()
    assert load_unless_cancelled(load, CancelToken()) == "model"  # type: ignore[arg-type]

    def missing() -> object:
        raise ModelNotFoundError("no such model file: /models/none.gguf")

    with pytest.raises(ModelNotFoundError):
        load_unless_cancelled(missing, CancelToken())  # type: ignore[arg-type]
    cancelled = CancelToken()
    cancelled.cancel()
    assert load_unless_cancelled(load, cancelled) is None  # type: ignore[arg-type]
