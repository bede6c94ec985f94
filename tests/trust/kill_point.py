"""Run one engine operation and SIGKILL its own process group at a chosen progress event.

Used by test_kill_on_progress.py as ``python kill_point.py OPERATION HOME STAGE COUNT [ARGS...]``: the
kill lands when the ``COUNT``-th event of ``STAGE`` is reported, so it interrupts the operation mid-way
by construction, not after a sleep that a fast or slow machine would make miss. Everything the
operation finished is printed (and flushed) before the next step starts, so the test knows what was
committed before the kill. The whole group dies, parse workers included, as when the machine loses power.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from engine.embed.hashing import HashingEmbedder
from engine.progress import Progress
from engine.request import AskRequest
from engine.service import Engine


class KillAt:
    """A progress callback (and stage listener) that kills the process group at the chosen event."""

    def __init__(self, stage: str, count: int) -> None:
        self.stage, self.count, self.seen = stage, count, 0

    def __call__(self, event: Progress | str) -> None:
        stage = event if isinstance(event, str) else event.stage
        if stage != self.stage:
            return
        self.seen += 1
        if self.seen >= self.count:
            print(f"killing at {self.stage} #{self.seen}", flush=True)
            os.killpg(os.getpgid(0), signal.SIGKILL)


def ingest(engine: Engine, kill: KillAt, paths: list[str]) -> None:
    for result in engine.add_documents([Path(p) for p in paths], progress=kill):
        print(f"stored {result.outcome.value} {result.doc_id} {Path(result.path).name}", flush=True)


def embed(engine: Engine, kill: KillAt, _: list[str]) -> None:
    import engine.retrieve.library_source as library_source

    library_source.EMBED_STEP = 8  # several steps, so the kill falls between saved ones

    def progress(event: Progress) -> None:
        if event.stage == "embed" and event.label.endswith("passages embedded"):  # a step's vectors are cached
            print(f"embedded {event.done} of {event.total}", flush=True)
        kill(event)
    print(f"embedded {engine.embed_pending(progress)} passages", flush=True)


def install(engine: Engine, kill: KillAt, args: list[str]) -> None:
    engine.install_datastore(args[0], replace="--replace" in args, progress=kill)
    print("installed", flush=True)


def ask(engine: Engine, kill: KillAt, args: list[str]) -> None:
    answer = engine.ask(AskRequest(args[0], mode="digest"), on_stage=kill)
    print(f"answered {answer.id}", flush=True)


def edit(engine: Engine, kill: KillAt, args: list[str]) -> None:
    """Correct a title again and again; the kill lands inside the COUNT-th edit's write transaction."""
    statements = KillAt(kill.stage, kill.count)
    engine.library._conn.set_trace_callback(lambda sql: statements(sql.split(" SET ")[0]))
    for n in range(1, 1000):
        engine.update_metadata(args[0], title=f"Corrected title {n}", venue=f"Venue {n}")
        print(f"edited {n}", flush=True)


OPERATIONS = {"ingest": ingest, "embed": embed, "install": install, "ask": ask, "edit": edit}

if __name__ == "__main__":
    operation, home, stage, count, *rest = sys.argv[1:]
    with Engine(home=home) as opened:
        opened.embedder = HashingEmbedder()  # the model is beside the point: what survives the kill is
        OPERATIONS[operation](opened, KillAt(stage, int(count)), rest)
    print("finished without being killed", flush=True)
