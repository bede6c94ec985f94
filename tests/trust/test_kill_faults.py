"""SIGKILL at the worst moments: while the vector index is being saved and while an answer is
being generated. After each kill the data opens, nothing stored before is lost or damaged, and
the interrupted work runs to the end when started again.

(SIGKILL during ingest: tests/e2e/test_kill_ingest.py; during a datastore import:
tests/e2e/test_datastore_cli.py::test_an_import_killed_mid_way_resumes_without_losing_or_doubling_records.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.index.storage import load_index
from engine.service import Engine

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
REPO = Path(__file__).resolve().parents[2]

# Saves a growing index over and over, reporting each completed save: a kill lands mid-save often.
_SAVE_LOOP = textwrap.dedent("""
    import sys
    import numpy as np
    from pathlib import Path
    from engine.index.faiss_index import FlatIndex
    from engine.index.storage import save_index

    path = Path(sys.argv[1])
    index = FlatIndex("test-model", 64)
    rng = np.random.default_rng(7)
    for round_ in range(100000):
        ids = [f"doc-{round_:06d}-{i:03d}" for i in range(200)]
        vectors = rng.standard_normal((200, 64)).astype("float32")
        index.add(ids, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
        save_index(index, path)
        print(len(index), flush=True)
""")


@pytest.mark.parametrize("delay", [0.0, 0.013, 0.05, 0.21])
def test_kill_during_index_save_leaves_the_last_saved_index_whole(tmp_path: Path, delay: float) -> None:
    path = tmp_path / "vectors" / "library.index"
    process = subprocess.Popen([sys.executable, "-c", _SAVE_LOOP, str(path)], stdout=subprocess.PIPE, text=True,
                               cwd=REPO)
    assert process.stdout is not None
    saved = [int(process.stdout.readline()) for _ in range(5)]  # a few whole saves, then kill mid-way
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    saved += [int(line) for line in process.stdout.read().split()]

    index = load_index(path, model_id="test-model", dimension=64)  # raises IndexCorruptError if damaged
    assert len(index) >= saved[-1] and len(index) % 200 == 0
    assert len(index.passage_ids()) == len(index)


def _quire(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "engine.cli.main", "--home", str(home), *args]


@pytest.mark.slow
def test_kill_during_answer_generation_keeps_the_library_and_the_next_ask_works(tmp_path: Path,
                                                                                papers_dir: Path) -> None:
    home = tmp_path / "home"
    with Engine(home) as engine:
        list(engine.add_documents([papers_dir / "mooney05.pdf", papers_dir / "bunescu-acl07.pdf"]))
        engine.embed_pending()
        before = {d.id: d.passage_count for d in engine.documents()}
        answers_before = len(engine.answers())
    question = "What kernel do the authors use for relation extraction?"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}

    process = subprocess.Popen(_quire(home, "ask", question, "--write"), stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, cwd=REPO, env=env)
    assert process.stdout is not None
    assert process.stdout.readline().startswith("Draft"), "the model never started writing"
    process.stdout.read(3)  # a few tokens of the draft have streamed: the model is mid-answer
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL, "the answer finished before the kill reached it"

    with Engine(home) as engine:
        assert engine.library.check_integrity() == []
        assert {d.id: d.passage_count for d in engine.documents()} == before
        assert len(engine.answers()) == answers_before  # no half-written answer in the history
    again = subprocess.run(_quire(home, "ask", question, "--json"), capture_output=True, text=True, timeout=900,
                           check=False, cwd=REPO, env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["question"] == question
