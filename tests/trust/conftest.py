"""Fixtures shared by the trust tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.trust.test_datastore_faults import RECORDS, make_engine, write_jsonl


@pytest.fixture(scope="module")
def good_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pack")
    with make_engine(folder / "builder") as engine:
        engine.add_datastore(write_jsonl(folder / "records.jsonl", RECORDS), "graphs")
        built, _ = engine.pack_datastore("graphs", folder / "graphs.quirepack", version="1")
    return built
