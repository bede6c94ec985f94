"""Questions that are not valid text: bytes that are not UTF-8 on the command line, lone surrogates
through the Engine. They reach the embedder's tokenizer, SQLite and the answer history, none of
which accepts a lone surrogate; Quire replaces them and searches the rest of the question."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf

from engine.request import AskRequest
from engine.service import Engine
from engine.text.characters import readable_text

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def embedded_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library of one paper about citation graphs, embedded, so search and ask run the embedder."""
    folder = tmp_path_factory.mktemp("inbox")
    text_pdf(folder / "citations.pdf", [paper_text("citation graphs")])
    home = tmp_path_factory.mktemp("home")
    with Engine(home) as engine:
        assert [r.outcome.value for r in engine.add_documents([folder])] == ["added"]
        assert engine.embed_pending() > 0
    return home


def quire_bytes(home: Path, *args: bytes) -> subprocess.CompletedProcess[bytes]:
    """The CLI with raw argv bytes, as a shell passes $'\\xff\\xfe ...' from a terminal in Latin-1."""
    env = {key: value for key, value in os.environ.items() if key != "QUIRE_HOME"}
    env.update(PYTHONPATH=str(REPO), LC_ALL="C.UTF-8")
    return subprocess.run([sys.executable.encode(), b"-m", b"engine.cli.main", b"--home", os.fsencode(home), *args],
                          capture_output=True, env=env, timeout=180, check=False, cwd=REPO)


def test_readable_text_replaces_only_lone_surrogates() -> None:
    assert readable_text("\udcff\udcfe citation") == "\ufffd\ufffd citation"
    assert readable_text("Gödel 📄 “x”") == "Gödel 📄 “x”"


@pytest.mark.slow
def test_invalid_utf8_on_the_command_line_is_searched_and_answered(embedded_home: Path) -> None:
    searched = quire_bytes(embedded_home, b"search", b"\xff\xfe citation")
    assert searched.returncode == 0, searched.stderr.decode(errors="replace")
    assert b"Traceback" not in searched.stderr
    assert b"citation graphs" in searched.stdout
    asked = quire_bytes(embedded_home, b"ask", b"--digest", b"\xff\xfe citation graphs?")
    assert asked.returncode == 0, asked.stderr.decode(errors="replace")
    assert b"not valid UTF-8" in asked.stdout + asked.stderr  # the user learns why their question looks odd
    only_bytes = quire_bytes(embedded_home, b"search", b"\xff\xfe")
    assert only_bytes.returncode == 1 and b"no searchable words" in only_bytes.stderr
    assert b"Traceback" not in only_bytes.stderr


@pytest.mark.slow
def test_lone_surrogates_through_the_engine_search_and_ask(embedded_home: Path) -> None:
    with Engine(embedded_home) as engine:
        hits = engine.search("\udcff\udcfe citation graphs")
        assert hits and "citation graphs" in hits[0].text
        answer = engine.ask(AskRequest("\ud800 how are citation graphs used?", mode="digest"))
        assert answer.sentences and "not valid UTF-8" in answer.notice
        assert "\ud800" not in answer.question
        assert engine.answer(answer.id).question == answer.question  # saved: SQLite could encode it
