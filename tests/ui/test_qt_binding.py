"""The Qt binding itself must not corrupt Python's reference counts.

PySide6 6.12.0 dropped a reference to ``True`` every time any signal was emitted (connected or
not). The app emits signals for every streamed token and progress report, so after enough of them
``True`` was freed and Python aborted ("bool_dealloc: deallocating True or False"), at exit or
in the middle of a session. pyproject.toml excludes that release; this test fails on any binding
that does the same, so a future release with the bug is caught before it ships.
"""

from __future__ import annotations

import gc
import sys

from PySide6.QtCore import QObject, Signal

EMITS = 200


class _Emitter(QObject):
    plain = Signal()
    flag = Signal(bool)
    value = Signal(object)


def _references() -> tuple[int, int, int]:
    gc.collect()
    return sys.getrefcount(True), sys.getrefcount(False), sys.getrefcount(None)


def test_emitting_signals_leaves_the_reference_counts_of_true_false_and_none_alone(qapp: object) -> None:
    emitter = _Emitter()
    heard: list[object] = []
    emitter.plain.connect(lambda: None)
    emitter.flag.connect(lambda _flag: None)
    emitter.value.connect(heard.append)
    unconnected = _Emitter()
    before = _references()
    for _ in range(EMITS):
        emitter.plain.emit()
        emitter.flag.emit(True)
        emitter.flag.emit(False)
        emitter.value.emit(None)
        unconnected.plain.emit()
    heard.clear()  # the slot kept the Nones it was given; let them go before counting
    after = _references()
    drift = [now - then for now, then in zip(after, before, strict=True)]
    assert all(abs(d) < EMITS // 10 for d in drift), f"True/False/None references changed by {drift}"
