"""Fixtures of the engine tests: a real PostgreSQL server per module that asks for one."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.pg_server import PgServer


@pytest.fixture(scope="module")
def pg_server() -> Iterator[PgServer]:
    # Not under pytest's own temporary folder: the server runs as another user, and every pytest session
    # (others run beside this one) makes that folder private to its owner again, so a restart could not
    # reach its data folder.
    folder = Path(tempfile.mkdtemp(prefix="quire-pg-"))
    try:
        server = PgServer(folder / "data")
        try:
            yield server
        finally:
            try:
                server.stop("fast")
            except subprocess.CalledProcessError:
                pass  # a test left it stopped
    finally:
        shutil.rmtree(folder, ignore_errors=True)
