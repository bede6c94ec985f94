"""``quire-desktop --self-test`` as a packager or CI would run it: a separate process, no display."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from engine.demo import demo_papers


@pytest.mark.slow
def test_self_test_ingests_the_demo_papers_and_exits_zero() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-m", "desktop", "--self-test"], capture_output=True, text=True,
                          env=env, timeout=3600)  # a hang guard only: the self-test itself fails on a stall
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"self-test passed: {len(demo_papers())} demo papers" in done.stdout
