"""`quire` end to end: real subprocesses on a library in a temporary folder, outputs parsed as a user's script would.

Each run starts a fresh interpreter (about a second, mostly importing PyMuPDF), so tests share one
ingested library where they only read it, and check the catalog in-process where a CLI call would only repeat.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fixtures.pdfs import encrypted_pdf, paper_text, text_pdf

from engine.importer import Outcome
from engine.store import Library

OUTCOMES = {outcome.value for outcome in Outcome}
LIST_KEYS = {"id", "title", "authors", "year", "pages", "path", "status"}
REAL_PAPERS = ("mooney05.pdf", "bunescu-acl07.pdf")
UNICODE_NAME = "Ünïcödé 📄 “quoted” paper.pdf"


def quire(home: Path, *args: str | Path, env: dict[str, str] | None = None,
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user would, on ``home`` only (QUIRE_HOME from the caller's shell is dropped)."""
    environment = {key: value for key, value in os.environ.items() if key != "QUIRE_HOME"}
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "engine.cli.main", "--home", str(home), *map(str, args)],
                          capture_output=True, text=True, encoding="utf-8", errors="surrogateescape",
                          env=environment, cwd=cwd, timeout=120, check=False)


def quire_json(home: Path, *args: str | Path) -> Any:
    done = quire(home, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, papers_dir: Path) -> dict[str, Any]:
    """One library ingested once through the CLI: two real papers, a broken file and a unicode name."""
    folder = tmp_path_factory.mktemp("inbox")
    broken = folder / "broken.pdf"
    broken.write_bytes((papers_dir / REAL_PAPERS[0]).read_bytes()[:1024])
    unicode_named = text_pdf(folder / UNICODE_NAME, [paper_text("unicode")])
    files = [*(papers_dir / name for name in REAL_PAPERS), broken, unicode_named]
    home = tmp_path_factory.mktemp("home")
    done = quire(home, "ingest", "--json", *files)
    return {"home": home, "files": files, "ingest": done}


# --- ingest -------------------------------------------------------------------------------


def test_ingest_json_prints_one_outcome_per_file(library: dict[str, Any]) -> None:
    done = library["ingest"]
    assert done.returncode == 0, done.stderr

    results = json.loads(done.stdout)  # stdout is pure JSON: the human lines went to stderr

    assert [result["path"] for result in results] == [str(path) for path in library["files"]]
    assert [result["outcome"] for result in results] == ["added", "added", "failed", "added"]
    for result in results[:2]:
        assert result["doc_id"] and result["pages"] == 8 and result["passages"] > 0
    assert "incomplete" in results[2]["reason"] and "download it again" in results[2]["reason"]
    # The human-readable lines, one per file, unicode names intact.
    lines = done.stderr.splitlines()
    assert lines[0].startswith("added") and REAL_PAPERS[0] in lines[0] and "(8 pages," in lines[0]
    assert any(line.startswith("failed") and "broken.pdf: the PDF" in line for line in lines)
    assert any(line.startswith("added") and UNICODE_NAME in line for line in lines)
    assert "4 files: 3 added, 1 failed" in done.stderr


def test_ingest_again_reports_unchanged(library: dict[str, Any]) -> None:
    results = quire_json(library["home"], "ingest", *library["files"])

    assert [result["outcome"] for result in results] == ["unchanged", "unchanged", "failed", "unchanged"]


def test_ingest_with_password(tmp_path: Path) -> None:
    locked = encrypted_pdf(tmp_path / "locked.pdf", "Sealed results on coral bleaching.", user_password="p@ss word")
    home = tmp_path / "home"

    refusal = quire(home, "ingest", locked, "--json")
    [opened] = quire_json(home, "ingest", "--password", "p@ss word", locked)

    assert refusal.returncode == 1, refusal.stderr  # every file of the batch failed
    [refused] = json.loads(refusal.stdout)

    assert refused["outcome"] == "failed" and "quire ingest --password" in refused["reason"]
    assert opened["outcome"] == "added" and opened["passages"] == 1


def test_file_names_that_look_like_options(tmp_path: Path) -> None:
    dashed = text_pdf(tmp_path / "-v.pdf", [paper_text("dashes")])
    double = text_pdf(tmp_path / "--json.pdf", [paper_text("double dashes")])
    home = tmp_path / "home"

    # After "--" nothing is an option; the relative paths resolve against the working folder.
    done = quire(home, "ingest", "--json", "--", dashed.name, double.name, cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert [(r["path"], r["outcome"]) for r in json.loads(done.stdout)] == [
        ("-v.pdf", "added"), ("--json.pdf", "added")]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="only Linux allows non-UTF-8 bytes in names")
def test_non_utf8_file_name_does_not_crash_the_text_output(tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    with open(os.fsencode(folder) + b"/caf\xe9.pdf", "wb") as handle:
        handle.write(text_pdf(tmp_path / "source.pdf", [paper_text("coffee")]).read_bytes())

    done = quire(tmp_path / "home", "ingest", folder, env={"PYTHONIOENCODING": "utf-8"})

    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr  # its only file failed
    assert "rename the file" in done.stdout


def test_hostile_pdfs_each_get_an_outcome_without_a_crash(tmp_path: Path, hostile_dir: Path) -> None:
    home = tmp_path / "home"
    hostile = sorted(hostile_dir.glob("*.pdf"))

    done = quire(home, "ingest", "--json", hostile_dir)

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    results = json.loads(done.stdout)
    assert sorted(result["path"] for result in results) == sorted(str(path) for path in hostile)
    for result in results:
        assert result["outcome"] in OUTCOMES
        assert "unexpected error" not in result["reason"], result
        if result["outcome"] == "failed":
            assert result["reason"], result
    library = Library(home / "library.db")
    try:
        assert library.check_integrity() == []
        assert library.counts()["documents"] == len(hostile)
    finally:
        library.close()


# --- library ------------------------------------------------------------------------------


def test_library_list_json_has_the_documented_fields(library: dict[str, Any]) -> None:
    documents = quire_json(library["home"], "library", "list")

    assert len(documents) == 4
    for document in documents:
        assert document.keys() >= LIST_KEYS
    by_name = {Path(d["path"]).name: d for d in documents}
    paper = by_name[REAL_PAPERS[0]]
    assert paper["status"] == "indexed"
    assert paper["title"] and paper["pages"] == 8 and paper["year"] == 2005
    assert paper["authors"] and all(isinstance(author, str) and author for author in paper["authors"])
    assert paper["path"] == str(library["files"][0].resolve())
    broken = by_name["broken.pdf"]
    assert (broken["status"], broken["pages"]) == ("failed", 0)
    assert "incomplete" in broken["error"]
    assert by_name[UNICODE_NAME]["status"] == "indexed"


def test_library_show_accepts_an_id_prefix(library: dict[str, Any]) -> None:
    home = library["home"]
    first = json.loads(library["ingest"].stdout)[0]

    shown = quire_json(home, "library", "show", first["doc_id"][:6], "--passages")
    text = quire(home, "library", "show", first["doc_id"][:6])

    assert shown["id"] == first["doc_id"]
    assert shown["title"] == first["title"]
    assert len(shown["passage_list"]) == first["passages"] > 0
    assert all(p["rects"] and p["pages"][0] >= 1 for p in shown["passage_list"])
    assert text.returncode == 0, text.stderr
    assert first["doc_id"] in text.stdout and first["title"] in text.stdout
    assert f"{first['passages']} passages" in text.stdout


@pytest.mark.parametrize(("command", "doc_id"), [("show", "0000ffff0000ffff"), ("remove", "zz")])
def test_unknown_id_exits_1_with_a_hint(library: dict[str, Any], command: str, doc_id: str) -> None:
    done = quire(library["home"], "library", command, doc_id)

    assert done.returncode == 1
    assert done.stdout == ""
    assert f"No document with id {doc_id!r}" in done.stderr
    assert "quire library list" in done.stderr
    assert "Traceback" not in done.stderr


def test_remove_by_prefix_then_the_library_is_empty(tmp_path: Path, papers_dir: Path) -> None:
    home = tmp_path / "home"
    [added] = quire_json(home, "ingest", papers_dir / REAL_PAPERS[1])

    removed = quire_json(home, "library", "remove", added["doc_id"][:5])
    listed = quire(home, "library", "list")

    assert removed["removed"] == added["doc_id"]
    assert "The library is empty" in listed.stdout
    library = Library(home / "library.db")
    try:
        assert library.counts() == {"documents": 0, "passages": 0, "pages": 0}
        assert library.check_integrity() == []
    finally:
        library.close()


# --- doctor -------------------------------------------------------------------------------


def test_doctor_json_reports_this_library(library: dict[str, Any]) -> None:
    report = quire_json(library["home"], "doctor")

    assert report["data_dir"] == str(library["home"].resolve())
    assert report["problems"] == []
    assert report["counts"]["documents"] == 4
    assert report["counts"]["documents_failed"] == 1
    assert report["counts"]["passages"] > 0
    assert report["packages"]["pymupdf"]
    assert "tesseract" in report["ocr"]


def test_console_script_runs(tmp_path: Path) -> None:
    script = shutil.which("quire", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the quire console script is not installed next to this interpreter")

    done = subprocess.run([script, "--home", str(tmp_path), "doctor", "--json"], capture_output=True, text=True,
                          timeout=120, check=False)

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["data_dir"] == str(tmp_path.resolve())
