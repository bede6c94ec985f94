"""Cold-start time of `quire search` on a 2,500-passage library, and of the desktop app.

Every figure is a fresh process, timed from before it is started until it is done (search) or
its window lists the library (desktop), so interpreter start, imports, opening the library and
the models are all in it. Beside them, for scale: `python -c "pass"`, `python -c "import engine"`,
and the seconds the search process spent importing (from ``-X importtime``). Runs are
interleaved (one of each kind per round) so that load from other jobs falls on all kinds alike;
the median and the best of the rounds are reported with the load average before and after.

The library is built once (the bundled sample datastore's abstracts written into PDFs, ingested
and embedded with the default int8 embedder) and kept under ``--library`` for later runs.

    python benchmarks/cold_search.py [--library DIR] [--rounds 7] [--json benchmarks/results/cold_search.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymupdf
from common import emit, summary

REPO = Path(__file__).resolve().parents[1]
DATASTORE = REPO / "resources" / "datastores" / "cs-sample.jsonl.gz"
TARGET_PASSAGES = 2500
WORDS_A_PAGE = 450
TARGET_S = 1.0
QUERIES = ["citation recommendation with graph neural networks", "transformer language model pretraining",
           "image segmentation benchmark", "reinforcement learning for robotics", "privacy in federated learning"]
HEAVY = ("torch", "transformers", "sentence_transformers")

# The desktop app as desktop/app.py starts it, until the library table lists every document.
DESKTOP_PROBE = """
import os, sys
from pathlib import Path
from PySide6.QtCore import QSettings, QTimer
from desktop.app import application
from engine.service import Engine
from ui.engine_client import EngineClient
from ui.main_window import MainWindow
from ui.theme import apply_theme

home, expected = Path(sys.argv[1]), int(sys.argv[2])
app = application()
apply_theme(app)
client = EngineClient(Engine(home))
window = MainWindow(client, QSettings(str(home / "window.ini"), QSettings.Format.IniFormat))
window.show()

def check():
    if window.table.model().rowCount() >= expected and window.stack.currentWidget() is window.table:
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers", "sentence_transformers"))
        print("READY", ",".join(heavy), flush=True)
        os._exit(0)  # the figure is taken; Qt's teardown is no part of it

timer = QTimer()
timer.timeout.connect(check)
timer.start(5)
app.exec()
"""


def quire(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine.cli.main", "--home", str(home), *args], cwd=REPO,
                          capture_output=True, text=True, check=check)


def build_library(home: Path) -> int:
    """Write the sample abstracts into PDFs, 4 a file, and ingest them until the library holds the target."""
    papers = home.parent / "papers"
    papers.mkdir(parents=True, exist_ok=True)
    with gzip.open(DATASTORE, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    per_file, batch, written = 4, 5, 0  # small steps: the library ends a little over the target
    while passage_count(home) < TARGET_PASSAGES:
        folder = papers / f"batch-{written // (per_file * batch):03d}"
        folder.mkdir(exist_ok=True)
        for _ in range(batch):
            chunk = records[written:written + per_file]
            if not chunk:
                raise SystemExit("the sample datastore ran out before the library reached its size")
            _write_pdf(folder / f"paper-{written // per_file:04d}.pdf", chunk)
            written += len(chunk)
        quire(home, "ingest", str(folder))
    return passage_count(home)


def _write_pdf(path: Path, records: list[dict[str, Any]]) -> None:
    document = pymupdf.open()
    for record in records:
        words = f"{record.get('title') or ''}\n\n{record.get('text') or ''}".split(" ")
        for start in range(0, len(words), WORDS_A_PAGE):  # a page holds this much at 9 pt: none is cut off
            page = document.new_page()
            page.insert_textbox(pymupdf.Rect(72, 72, 540, 770), " ".join(words[start:start + WORDS_A_PAGE]),
                                fontsize=9)
    document.save(path)
    document.close()


def passage_count(home: Path) -> int:
    if not (home / "settings.toml").exists() and not home.exists():
        return 0
    done = quire(home, "doctor", check=False)
    for line in done.stdout.splitlines():
        if line.strip().startswith("passages"):
            return int(line.split()[-1])
    return 0


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return elapsed, done.stdout


def desktop_ready(home: Path, documents: int) -> tuple[float, list[str]]:
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    elapsed, out = timed([sys.executable, "-c", DESKTOP_PROBE, str(home), str(documents)], env=env)
    line = next(line for line in out.splitlines() if line.startswith("READY"))
    return elapsed, [name for name in line[len("READY"):].strip().split(",") if name]


def search_imports(home: Path, query: str) -> tuple[float, list[str]]:
    """Seconds the search process spends importing (top-level imports of -X importtime), and the heavy ones."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "engine.cli.main", "--home", str(home),
                           "search", query], cwd=REPO, capture_output=True, text=True, check=True)
    total_us, heavy = 0, set()
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if cumulative.strip().isdigit() and not name.startswith("  ") and name.strip():
            total_us += int(cumulative)
        if name.strip().split(".")[0] in HEAVY:
            heavy.add(name.strip().split(".")[0])
    return total_us / 1e6, sorted(heavy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", type=Path, default=Path(tempfile.gettempdir()) / "quire-cold-search",
                        help="where the benchmark library is built once and kept")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()

    home = args.library / "home"
    passages = passage_count(home)
    if passages < TARGET_PASSAGES:
        print(f"building the library in {home} (once) ...", file=sys.stderr)
        passages = build_library(home)
    documents = int(next(line.split()[-1] for line in quire(home, "doctor").stdout.splitlines()
                         if line.strip().startswith("documents ")))
    quire(home, "search", QUERIES[0])  # the int8 ONNX copy exists from the ingest; this makes sure of it

    load_before = os.getloadavg()
    kinds: dict[str, Callable[[int], float]] = {
        "python -c pass": lambda _: timed([sys.executable, "-c", "pass"])[0],
        "python -c 'import engine'": lambda _: timed([sys.executable, "-c", "import engine"])[0],
        "quire search (cold)": lambda r: timed([sys.executable, "-m", "engine.cli.main", "--home", str(home),
                                                "search", QUERIES[r % len(QUERIES)]])[0],
    }
    samples: dict[str, list[float]] = {kind: [] for kind in kinds}
    desktop: list[float] = []
    desktop_heavy: list[str] = []
    for round_number in range(args.rounds):
        for kind, run in kinds.items():
            samples[kind].append(run(round_number))
        elapsed, desktop_heavy = desktop_ready(home, documents)
        desktop.append(elapsed)
    import_s, heavy = search_imports(home, QUERIES[0])
    load_after = os.getloadavg()

    results = {
        "library": {"passages": passages, "documents": documents},
        "cold_start": {kind: summary(values) for kind, values in samples.items()},
        "search_import_s": round(import_s, 3),
        "search_imports_heavy": heavy,
        "desktop_start_to_ready": {**summary(desktop), "imports_heavy": desktop_heavy},
        "target_s": TARGET_S,
        "meets_target": statistics.median(samples["quire search (cold)"]) <= TARGET_S,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "command": "python benchmarks/cold_search.py --json benchmarks/results/cold_search.json",
    }
    emit(results, args.json)


if __name__ == "__main__":
    main()
