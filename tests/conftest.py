"""Shared fixtures: an isolated library per test and the shared corpus of real papers.

This file also puts tests/ on sys.path (pytest's rootdir-conftest behaviour), so test modules
import the PDF generators as ``fixtures.pdfs``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.pg_server import pg_server  # noqa: F401 - a real PostgreSQL server per module that asks for one

from engine.service import Engine

# The shared data sits next to the checkout (../shared); QUIRE_TEST_CORPUS points elsewhere.
CORPUS = Path(os.environ.get("QUIRE_TEST_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus"))
# What the CLI's main() sets for its process (engine.process); tests run it in-process.
_ENTRY_POINT_VARIABLES = ("HF_HUB_OFFLINE", "OMP_WAIT_POLICY")


@pytest.fixture(autouse=True)
def _entry_point_environment_stays_in_its_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that runs ``quire``'s main() in this process leaves the next test the environment it found."""
    for name in _ENTRY_POINT_VARIABLES:
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:
            monkeypatch.setenv(name, "")
            monkeypatch.delenv(name)


def _corpus_dir(name: str) -> Path:
    folder = CORPUS / name
    if not folder.is_dir():
        pytest.skip(f"the shared corpus is not here ({folder}); set QUIRE_TEST_CORPUS")
    return folder


@pytest.fixture(scope="session")
def papers_dir() -> Path:
    return _corpus_dir("papers")


@pytest.fixture(scope="session")
def hostile_dir() -> Path:
    return _corpus_dir("hostile")


@pytest.fixture(scope="session")
def real_paper(papers_dir: Path) -> Path:
    """A small real paper (8 pages) from the corpus."""
    return papers_dir / "mooney05.pdf"


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    """An Engine on a fresh library in tmp_path: never the user's data folder."""
    with Engine(home=tmp_path / "home") as opened:
        yield opened


_EXIT_STATUS = pytest.StashKey[int]()


# PySide6 can crash the interpreter after the last test: Qt GUI's exit handlers destroy objects
# that still have Python wrappers once Python has finalised (a NULL thread state in shiboken's
# Stash, seen under gdb), turning a passing run into exit code 139. Which objects are left
# depends on which tests ran. When Qt was loaded, the session ends here, after every report is
# written, with pytest's own exit status and without running those handlers.
@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_EXIT_STATUS] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if "PySide6.QtCore" in sys.modules and _EXIT_STATUS in config.stash:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(config.stash[_EXIT_STATUS])
