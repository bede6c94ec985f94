"""How often the CLI prints a plain progress line in a log (off a terminal)."""

from __future__ import annotations

import io

import pytest

from engine.cli.progress_bar import PLAIN_EVERY, TerminalLine, plain_every


def test_off_a_terminal_a_quick_step_prints_nothing_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QUIRE_PROGRESS_EVERY", raising=False)
    line = TerminalLine(io.StringIO())
    assert line.plain and not line.due()  # QUIET_FOR has not passed


def test_progress_every_zero_prints_at_every_update(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUIRE_PROGRESS_EVERY", "0")
    line = TerminalLine(io.StringIO())
    assert line.due() and line.due()


@pytest.mark.parametrize("value", ["often", "", "nan-ish"])
def test_a_value_that_is_not_a_number_keeps_the_default(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("QUIRE_PROGRESS_EVERY", value)
    assert plain_every() == PLAIN_EVERY


def test_a_negative_value_means_every_update(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUIRE_PROGRESS_EVERY", "-5")
    assert plain_every() == 0.0
