"""Watched folders: seconds from a PDF saved into a watched folder to it being searchable, and idle CPU.

A follower (Engine.follow_watched, as `quire library watch run` runs it, on a thread with an engine
of its own) watches a temporary folder. Each of ``--count`` one-page PDFs is saved into it (written
with PyMuPDF straight into the folder, as a reader's "save as" does), and a second engine on the same
library searches for the PDF's own word (BM25, as any search finds a new paper at once) every 50 ms
until it is found: that wait is the latency. Measured twice: while idle, and while another ingest
(`quire ingest` of the shared corpus, in a process of its own, into the same library) runs. Most of
the latency is the settle time (a file counts as complete once unchanged for that long); the
results give both, and the share that is Quire's own work.

Idle CPU: the process's CPU seconds over ``--idle`` seconds while the follower waits and nothing
changes. For comparison, the same for Qt's QFileSystemWatcher on the same folder (it has no
recursive mode, and the engine cannot import Qt: the reasons watchdog was chosen) with its event
latency beside watchdog's raw event latency.

    python benchmarks/watch_latency.py [--count 20] [--idle 30] [--json benchmarks/results/watch_latency.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine  # noqa: F401 - first, so ONNX Runtime's telemetry is off before anything imports it
from engine.progress import CancelToken
from engine.service import Engine
from engine.watch import SETTLE_S, SyncReport

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "papers"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _save_pdf(path: Path, word: str) -> None:
    import pymupdf

    with pymupdf.open() as document:
        page = document.new_page()
        page.insert_text((72, 72), [f"A note on {word}.", f"The {word} effect was measured twice."], fontsize=11)
        document.save(path)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


class _Follower:
    """Engine.follow_watched on a thread, with an engine of its own."""

    def __init__(self, home: Path, settle_s: float) -> None:
        self.stop = CancelToken()
        self.passes = 0
        self.ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(home, settle_s), daemon=True)
        self._thread.start()
        self.ready.wait(60)

    def _run(self, home: Path, settle_s: float) -> None:
        with Engine(home=home) as own:
            def heard(_: SyncReport) -> None:
                self.passes += 1
                self.ready.set()
            own.follow_watched(self.stop, heard, settle_s=settle_s)

    def close(self) -> None:
        self.stop.cancel()
        self._thread.join(30)


def _latencies(home: Path, folder: Path, count: int, label: str) -> list[float]:
    waits = []
    with Engine(home=home) as reader:
        for n in range(count):
            word = f"{label}word{n:03}x"
            _save_pdf(folder / f"{label}-{n:03}.pdf", word)
            saved = time.monotonic()
            while not reader.search(word, k=1, source="library", rewrite=False, rerank="none", spelling=False,
                                    lexical_only=True):
                time.sleep(0.05)
                if time.monotonic() - saved > 120:
                    raise SystemExit(f"{word} not searchable after 120 s")
            waits.append(time.monotonic() - saved)
    return waits


def _summary(waits: list[float], settle_s: float) -> dict[str, float]:
    return {"p50_s": round(statistics.median(waits), 3), "p95_s": round(_percentile(waits, 0.95), 3),
            "max_s": round(max(waits), 3), "p50_beyond_settle_s": round(statistics.median(waits) - settle_s, 3)}


def _idle_cpu(seconds: float) -> float:
    before = _cpu()
    time.sleep(seconds)
    return round(_cpu() - before, 4)


def _other_ingest(home: Path, scratch: Path) -> subprocess.Popen[bytes]:
    """`quire ingest` of the shared corpus: first into the watched library itself (the catalog's writer is
    shared), then again and again into fresh libraries (the same bytes would be "unchanged" in the first)."""
    papers = sorted(CORPUS.glob("*.pdf"))
    if not papers:
        raise SystemExit(f"the shared corpus is not at {CORPUS}: it is the other ingest")
    script = ("import sys, itertools\nfrom engine.cli.main import main\n"
              "for round in itertools.count():\n"
              "    where = sys.argv[1] if round == 0 else f'{sys.argv[2]}/other{round}'\n"
              "    main(['--home', where, 'ingest', '--no-embed', *sys.argv[3:]])\n")
    return subprocess.Popen([sys.executable, "-c", script, str(home), str(scratch), *map(str, papers)],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def _qt_comparison(folder: Path, count: int, idle_s: float) -> dict[str, object]:
    """Event latency (save -> event delivered) and idle CPU: watchdog against QFileSystemWatcher."""
    from PySide6.QtCore import QCoreApplication, QFileSystemWatcher
    from watchdog.events import FileSystemEventHandler
    from watchdog.observers import Observer

    app = QCoreApplication.instance() or QCoreApplication([])
    results: dict[str, object] = {}
    heard = threading.Event()

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: object) -> None:
            heard.set()

    observer = Observer()
    observer.schedule(Handler(), str(folder), recursive=True)
    observer.start()
    waits = []
    for n in range(count):
        heard.clear()
        start = time.monotonic()
        _save_pdf(folder / f"wd-{n}.pdf", "watchdog")
        heard.wait(5)
        waits.append(time.monotonic() - start)
    results["watchdog"] = {"event_p50_s": round(statistics.median(waits), 4),
                           "idle_cpu_s": _idle_cpu(idle_s), "recursive": True}
    observer.stop()
    observer.join()

    watcher = QFileSystemWatcher([str(folder)])
    fired: list[float] = []
    watcher.directoryChanged.connect(lambda _: fired.append(time.monotonic()))
    waits = []
    for n in range(count):
        fired.clear()
        start = time.monotonic()
        _save_pdf(folder / f"qt-{n}.pdf", "qt")
        while not fired and time.monotonic() - start < 5:
            app.processEvents()
        waits.append((fired[0] if fired else time.monotonic()) - start)
    before = _cpu()
    deadline = time.monotonic() + idle_s
    while time.monotonic() < deadline:  # an event loop waiting, as the app's would
        app.processEvents()
        time.sleep(0.05)
    results["QFileSystemWatcher"] = {"event_p50_s": round(statistics.median(waits), 4),
                                     "idle_cpu_s": round(_cpu() - before, 4),
                                     "recursive": False, "note": "subfolders need a watch each, added by hand"}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20, help="PDFs saved per condition")
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of idle CPU measurement")
    parser.add_argument("--settle", type=float, default=SETTLE_S, help="the follower's settle time")
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "watch_latency.json")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        home, folder = Path(scratch) / "home", Path(scratch) / "watched"
        folder.mkdir()
        with Engine(home=home) as setup:
            setup.watch_folder(folder)
        follower = _Follower(home, args.settle)
        try:
            idle = _latencies(home, folder, args.count, "idle")
            time.sleep(2)
            passes_before = follower.passes
            idle_cpu = _idle_cpu(args.idle)
            idle_passes = follower.passes - passes_before
            other = _other_ingest(home, Path(scratch))
            time.sleep(3)  # its parse workers are busy by now
            try:
                busy = _latencies(home, folder, args.count, "busy")
            finally:
                other.kill()
                other.wait()
        finally:
            follower.close()
        comparison = _qt_comparison(Path(scratch) / "watched", 5, min(args.idle, 10.0))

    result = {
        "what": "seconds from a PDF saved into a watched folder to it being found by search; idle CPU of the follower",
        "command": "python benchmarks/watch_latency.py " + " ".join(sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
                    "python": platform.python_version()},
        "settle_s": args.settle, "pdfs_per_condition": args.count,
        "idle": _summary(idle, args.settle),
        "during_other_ingest": _summary(busy, args.settle),
        "idle_cpu": {"seconds_measured": args.idle, "cpu_s": idle_cpu,
                     "cpu_share": round(idle_cpu / args.idle, 5), "passes_while_idle": idle_passes},
        "event_source_comparison": comparison,
        "latencies_s": {"idle": [round(x, 3) for x in idle], "during_other_ingest": [round(x, 3) for x in busy]},
    }
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({key: result[key] for key in ("idle", "during_other_ingest", "idle_cpu")}, indent=2))


if __name__ == "__main__":
    main()
