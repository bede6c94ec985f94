"""A real library of the bundled demo papers, and `quire mcp` started as a user's assistant starts it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from fixtures.quire_mcp import DEMO, quire_command, quire_environment


@pytest.fixture(scope="session")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The four demo papers ingested and embedded by `quire ingest`; the MCP tests only read it."""
    home = tmp_path_factory.mktemp("mcp") / "home"
    done = subprocess.run(quire_command(home, "ingest", str(DEMO)), capture_output=True, text=True,
                          env=quire_environment(), timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return home
