"""Shared fixtures: an isolated library per test and the shared corpus of real papers.

This file also puts tests/ on sys.path (pytest's rootdir-conftest behaviour), so test modules
import the PDF generators as ``fixtures.pdfs``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.service import Engine

# The shared data sits next to the checkout (../shared); QUIRE_TEST_CORPUS points elsewhere.
CORPUS = Path(os.environ.get("QUIRE_TEST_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus"))


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
