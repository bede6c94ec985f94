"""SIGKILL landing mid-operation by construction: the process kills its own group when the chosen
progress event is reported (kill_point.py), during ingest, embedding, datastore install, ask and a
metadata edit. After each kill the next start finds the library consistent, with everything the
killed process reported as finished still there, and the interrupted work completes when run again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf

from engine.datastore.files import DATABASE_FILE
from engine.embed.hashing import HashingEmbedder
from engine.index import read_header
from engine.index.storage import load_index
from engine.request import AskRequest
from engine.service import Engine

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")]
REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("kill_point.py")
Opener = Callable[[], Engine]  # opens the test's library as the next start of the app would
RECORDS = [{"id": f"rec-{i}", "title": f"Residual networks study {i}",
            "text": f"Deep residual networks number {i} segment street scenes. Wide networks train faster."}
           for i in range(40)]


def killed_at(operation: str, home: Path, stage: str, count: int, *args: str | Path) -> list[str]:
    """Run ``operation`` until its ``count``-th ``stage`` event kills it; the lines it printed before."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "QUIRE_PARSE_WORKERS": "1"}
    env.pop("QUIRE_HOME", None)
    process = subprocess.run([sys.executable, str(DRIVER), operation, str(home), stage, str(count), *map(str, args)],
                             capture_output=True, text=True, cwd=REPO, env=env, timeout=300, start_new_session=True,
                             check=False)
    lines = process.stdout.splitlines()
    assert process.returncode == -signal.SIGKILL, f"not killed ({process.returncode}): {lines} {process.stderr}"
    assert lines and lines[-1].startswith("killing at"), lines
    return lines[:-1]


@pytest.fixture
def engine_at(tmp_path: Path) -> Iterator[Opener]:
    opened: list[Engine] = []

    def open_engine() -> Engine:
        engine = Engine(home=tmp_path / "home")
        engine.embedder = HashingEmbedder()
        opened.append(engine)
        return engine
    yield open_engine
    for engine in opened:
        engine.close()


def papers(folder: Path, count: int, pages: int = 4) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [text_pdf(folder / f"paper{n}.pdf", [paper_text(f"topic {n} page {p}", paragraphs=4) for p in range(pages)])
            for n in range(count)]


def assert_consistent(engine: Engine) -> None:
    assert engine.library.check_integrity() == []
    assert engine.search("retrieval systems cite their sources", k=3, source="library")  # reads work


def test_kill_mid_ingest_keeps_every_reported_paper_and_the_rerun_adds_the_rest(tmp_path: Path,
                                                                                 engine_at: Opener) -> None:
    pdfs = papers(tmp_path / "inbox", 3)
    # Page 3 of the second paper: inside the transaction that writes it.
    printed = killed_at("ingest", tmp_path / "home", "parse", 4 + 3, *pdfs)
    stored = {line.split()[2] for line in printed if line.startswith("stored")}
    assert len(stored) == 1
    engine = engine_at()
    assert_consistent(engine)
    assert {d.id for d in engine.documents()} == stored  # the first paper whole, nothing of the second
    results = list(engine.add_documents(pdfs))
    assert sorted(r.outcome.value for r in results) == ["added", "added", "unchanged"]
    assert len(engine.documents()) == 3 and all(d.passage_count > 0 for d in engine.documents())
    assert_consistent(engine)


def test_kill_mid_embedding_keeps_the_index_loadable_and_the_cached_vectors(tmp_path: Path,
                                                                            engine_at: Opener) -> None:
    engine = engine_at()
    list(engine.add_documents(papers(tmp_path / "inbox", 3)))
    passage_ids = {p.id for d in engine.documents() for p in engine.passages(d.id)}
    engine.close()
    printed = killed_at("embed", tmp_path / "home", "embed", 6)
    finished = max(int(line.split()[1]) for line in printed if line.startswith("embedded"))
    assert 0 < finished < len(passage_ids)

    class Counting(HashingEmbedder):
        texts = 0

        def embed(self, texts, *args, **kwargs):  # type: ignore[no-untyped-def]
            Counting.texts += len(texts)
            return super().embed(texts, *args, **kwargs)

    engine = engine_at()
    engine.embedder = Counting()
    # Killed long before the index's first save: the status counts the cached vectors, and search uses them.
    saved = read_header(engine.library_source.index_path).count  # the empty index the run started with
    assert saved < finished <= engine.doctor()["counts"]["passages_embedded"] < len(passage_ids)
    assert engine.library_source.has_vectors()
    assert_consistent(engine)
    Counting.texts = 0  # the search above embedded its query
    engine.embed_pending()
    assert Counting.texts <= len(passage_ids) - finished  # what was embedded before the kill was kept
    index = load_index(engine.library_source.index_path, model_id=engine.embedder.model_id)
    assert set(index.passage_ids()) == passage_ids  # every passage once: none lost, none twice


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    source = tmp_path / "records.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    with Engine(home=tmp_path / "builder") as builder:
        builder.embedder = HashingEmbedder()
        builder.add_datastore(source, "cs")
        (tmp_path / "out").mkdir()
        built, _ = builder.pack_datastore("cs", tmp_path / "out", version="1.0")
    return built


def test_kill_mid_install_leaves_no_half_datastore_and_the_next_install_works(tmp_path: Path, pack: Path,
                                                                              engine_at: Opener) -> None:
    killed_at("install", tmp_path / "home", "install", 2, pack)
    engine = engine_at()
    assert engine.datastores() == []
    root = engine.paths.datastores
    leftovers = [p.name for p in root.iterdir() if p.name != ".downloads" and not p.name.endswith(".lock")]
    assert leftovers == []  # the staging folder is gone
    assert engine.install_datastore(pack).record_count == 40
    assert engine.search("residual networks street scenes", k=3, source="cs")


def test_kill_mid_replace_keeps_the_installed_datastore(tmp_path: Path, pack: Path, engine_at: Opener) -> None:
    engine = engine_at()
    engine.install_datastore(pack)
    engine.close()
    killed_at("install", tmp_path / "home", "install", 2, pack, "--replace")
    engine = engine_at()
    assert [info.name for info in engine.datastores()] == ["cs"]
    assert engine.search("residual networks street scenes", k=3, source="cs")


def test_a_datastore_set_aside_by_a_replace_killed_between_renames_is_restored(tmp_path: Path, pack: Path,
                                                                               engine_at: Opener) -> None:
    engine = engine_at()
    engine.install_datastore(pack)
    root = engine.paths.datastores
    engine.close()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    dead_pid = int(gone.stdout)  # a process that has exited: what a killed install leaves its folders named after
    os.replace(root / "cs", root / f".replaced-cs-{dead_pid}")  # the first rename done, the second never came
    (root / f".installing-cs-{dead_pid}").mkdir()
    (root / f".installing-cs-{dead_pid}" / DATABASE_FILE).write_bytes(b"half a database")
    engine = engine_at()
    assert [info.name for info in engine.datastores()] == ["cs"]
    assert sorted(p.name for p in root.iterdir() if p.name != ".downloads" and not p.name.endswith(".lock")) == ["cs"]
    assert engine.search("residual networks street scenes", k=3, source="cs")


def test_kill_mid_ask_leaves_no_half_answer_and_the_library_whole(tmp_path: Path, engine_at: Opener) -> None:
    engine = engine_at()
    list(engine.add_documents(papers(tmp_path / "inbox", 2)))
    engine.embed_pending()
    before = {d.id: d.passage_count for d in engine.documents()}
    kept = engine.ask(AskRequest("How do retrieval systems cite their sources?", mode="digest"))
    engine.close()
    # Digest answers report one stage, "retrieving": the kill lands before any passage is found.
    killed_at("ask", tmp_path / "home", "retrieving", 1, "What does topic 1 discuss?")
    engine = engine_at()
    assert_consistent(engine)
    assert {d.id: d.passage_count for d in engine.documents()} == before
    assert [summary.id for summary in engine.answers()] == [kept.id]  # the saved answer kept, no half record
    assert engine.ask(AskRequest("What does topic 1 discuss?", mode="digest")).question == "What does topic 1 discuss?"


def test_kill_mid_edit_keeps_every_finished_edit_and_none_half_done(tmp_path: Path, engine_at: Opener) -> None:
    engine = engine_at()
    (result,) = list(engine.add_documents(papers(tmp_path / "inbox", 1)))
    engine.close()
    printed = killed_at("edit", tmp_path / "home", "UPDATE documents", 5, result.doc_id)
    finished = [int(line.split()[1]) for line in printed if line.startswith("edited")]
    assert finished == [1, 2, 3, 4]
    engine = engine_at()
    assert_consistent(engine)
    document = engine.document(result.doc_id)
    # The fifth edit died inside its transaction: the fourth is what is stored, everywhere.
    assert (document.bib.title, document.bib.venue) == ("Corrected title 4", "Venue 4")
    assert {p.title for p in engine.passages(result.doc_id)} == {"Corrected title 4"}
    edits = engine.library.query("SELECT edits FROM document_edits WHERE doc_id=?", (result.doc_id,))
    assert json.loads(edits[0][0])["title"] == "Corrected title 4"
    assert engine.update_metadata(result.doc_id, title="After the crash").bib.title == "After the crash"
