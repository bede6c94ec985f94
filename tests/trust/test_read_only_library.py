"""A library on a read-only disk (a backup, a shared drive, a locked-down lab machine) can still be
listed, searched and exported: reads never need write access. The library folder, its database,
its vector index and its datastores are all under a real read-only mount (see
test_settings_faults.py: permission bits stop nothing for root)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf

from trust.test_settings_faults import _read_only, quire

pytestmark = pytest.mark.slow


def test_a_read_only_library_lists_searches_and_exports(tmp_path: Path) -> None:
    home = tmp_path / "home"
    papers = [text_pdf(tmp_path / f"{topic}.pdf", [paper_text(f"{topic} retrieval", paragraphs=4)])
              for topic in ("lexical", "dense")]
    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps({"id": "r1", "title": "Lexical retrieval at scale",
                                   "text": "Lexical retrieval scales to millions of passages. " * 4}) + "\n")
    assert quire(home, "ingest", *map(str, papers)).returncode == 0  # embedded: the dense side is read too
    assert quire(home, "datastore", "add", str(records), "--name", "notes", "--no-embed").returncode == 0
    before = sorted(p.relative_to(home).as_posix() for p in home.rglob("*"))

    read_only = _read_only(home)
    listed = quire(home, "library", "list", "--json", prefix=read_only)
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)) == 2
    searched = quire(home, "search", "lexical retrieval", "--json", prefix=read_only)
    assert searched.returncode == 0, searched.stderr
    hits = json.loads(searched.stdout)
    assert hits and {hit["source"] for hit in hits} >= {"library", "notes"}
    exported = quire(home, "library", "export", "--format", "ris", prefix=read_only)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.count("ER  - ") == 2
    assert "Traceback" not in searched.stderr + listed.stderr + exported.stderr
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == before  # nothing written
