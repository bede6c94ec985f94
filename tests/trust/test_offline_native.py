"""The offline promise checked below Python: no process of Quire looks up a host name or opens an
internet connection, from any thread, native ones included.

``test_offline.py`` guards Python's socket module, which cannot see a C library's own threads:
ONNX Runtime's official wheels (1.32) run Microsoft's 1DS telemetry uploader, which some seconds
after the first inference session looks up ``mobile.events.data.microsoft.com`` from a native
thread, however Python's sockets are patched. Here every process runs with a C tripwire
preloaded (``netguard.c``, compiled by the test: ``getaddrinfo``, ``gethostbyname*``, and
``connect``/``sendto`` to internet addresses are logged and refused) inside a network namespace
with no interfaces (``unshare -n``), and lives long enough with ONNX Runtime loaded for such a
thread to fire: the CLI flow (ingest with embedding, index, search, ask) in one process held
open 30 s after, and the desktop app kept running offscreen while it ingests and embeds.

Environment variables that make ONNX Runtime keep quiet on its own (``CI``, ``GITHUB_ACTIONS``...,
its own opt-outs) are removed first: CI sets ``CI=true``, and the test must see what a user's
machine does, not what a build server does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUARD_SOURCE = Path(__file__).with_name("netguard.c")
# What ONNX Runtime 1.32 reads to decide it runs on a build server (and so stays silent), and its opt-outs.
QUIETING_VARIABLES = ("CI", "GITHUB_ACTIONS", "TF_BUILD", "JENKINS_URL", "BUILDKITE", "TRAVIS", "GITLAB_CI",
                      "CIRCLECI", "APPVEYOR", "TEAMCITY_VERSION", "CODEBUILD_BUILD_ID", "ORT_RUNNING_UNIT_TESTS",
                      "ORT_DISABLE_TELEMETRY", "ORT_TELEMETRY_DISABLED")
HOLD_SECONDS = 30  # ONNX Runtime's uploader first looked its host up 6-10 s after a session started

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD and network namespaces "
                                                                             "are Linux features")


@pytest.fixture(scope="module")
def netguard(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler, "a C compiler is needed to build the network tripwire (Quire's setup needs one anyway)"
    library = tmp_path_factory.mktemp("netguard") / "netguard.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-o", str(library), str(GUARD_SOURCE), "-ldl"], check=True,
                   capture_output=True, timeout=120)
    return library


@pytest.fixture(scope="module")
def namespace_prefix() -> list[str]:
    """``unshare -n`` where the kernel lets this user make a network namespace; else the tripwire alone."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, timeout=30, check=False)
    return [unshare, "-n"] if probe.returncode == 0 else []


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # One cache for the module: the int8 ONNX copy of the embedder is exported once, and anything a
    # library writes under ~/.cache (ONNX Runtime's device id and event queue) lands where we look.
    return tmp_path_factory.mktemp("xdg-cache")


def guarded_env(netguard: Path, cache_dir: Path, log: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in QUIETING_VARIABLES and not key.startswith(("HF_", "TRANSFORMERS_", "QUIRE_"))}
    env.update(LD_PRELOAD=str(netguard), QUIRE_NETLOG=str(log), XDG_CACHE_HOME=str(cache_dir),
               QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    return env


def attempts(log: Path) -> str:
    return log.read_text(encoding="utf-8") if log.exists() else ""


def test_the_tripwire_sees_lookups_and_connections_made_in_c(netguard: Path, namespace_prefix: list[str],
                                                             cache_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "net.log"
    probe = ("import socket, threading\n"
             "def look():\n"
             "    try: socket.getaddrinfo('mobile.events.data.microsoft.com', 443)\n"
             "    except OSError: pass\n"
             "thread = threading.Thread(target=look); thread.start(); thread.join()\n"
             "s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
             "try: s.connect(('192.0.2.1', 80))\n"
             "except OSError as exc: print('refused', exc.errno)\n")
    done = subprocess.run([*namespace_prefix, sys.executable, "-c", probe], env=guarded_env(netguard, cache_dir, log),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    seen = attempts(log)
    assert "getaddrinfo(mobile.events.data.microsoft.com, 443)" in seen
    assert "connect(192.0.2.1 port 80)" in seen


_CLI_SESSION = """
import json, sys, time
from engine.cli.main import main

home, hold, papers = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
codes = {
    "ingest": main(["--home", home, "ingest", *papers]),  # embeds what it added
    "index": main(["--home", home, "index"]),
    "search": main(["--home", home, "search", "relation extraction with kernels", "-k", "5"]),
    "ask": main(["--home", home, "ask", "What kernel is used for relation extraction?", "--no-feedback"]),
}
loaded = "onnxruntime" in sys.modules
time.sleep(hold)  # a session left open: ONNX Runtime's threads have time to do what they do
print("SESSION " + json.dumps({"codes": codes, "onnxruntime_loaded": loaded}))
"""


@pytest.mark.slow
def test_cli_session_with_onnx_runtime_loaded_never_touches_the_network(
        netguard: Path, namespace_prefix: list[str], cache_dir: Path, tmp_path: Path, papers_dir: Path) -> None:
    log = tmp_path / "net.log"
    papers = [str(papers_dir / name) for name in ("mooney05.pdf", "bunescu-acl07.pdf")]
    done = subprocess.run([*namespace_prefix, sys.executable, "-c", _CLI_SESSION, str(tmp_path / "home"),
                           str(HOLD_SECONDS), *papers], env=guarded_env(netguard, cache_dir, log),
                          capture_output=True, text=True, timeout=900, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.rsplit("SESSION ", 1)[1])
    assert report["codes"] == {"ingest": 0, "index": 0, "search": 0, "ask": 0}, done.stderr[-3000:]
    assert report["onnxruntime_loaded"], "the embedder did not run on ONNX Runtime: this test would prove nothing"
    assert attempts(log) == "", f"network attempts:\n{attempts(log)}"
    assert not (cache_dir / "Microsoft").exists(), "ONNX Runtime wrote its telemetry device id / event queue"


@pytest.mark.slow
def test_runtime_imported_before_the_engine_with_its_opt_out_never_touches_the_network(
        netguard: Path, namespace_prefix: list[str], tmp_path: Path, papers_dir: Path) -> None:
    """A notebook that imports onnxruntime first: the fix Quire's refusal gives (the opt-out set before Python
    starts) keeps the process off the network, with Quire's models running (test_telemetry_import_order.py
    checks they refuse without it)."""
    log, cache = tmp_path / "net.log", tmp_path / "cache"
    papers = [str(papers_dir / name) for name in ("mooney05.pdf", "bunescu-acl07.pdf")]
    env = guarded_env(netguard, cache, log) | {"ORT_DISABLE_TELEMETRY": "1"}
    done = subprocess.run([*namespace_prefix, sys.executable, "-c", "import onnxruntime\n" + _CLI_SESSION,
                           str(tmp_path / "home"), str(HOLD_SECONDS), *papers], env=env,
                          capture_output=True, text=True, timeout=900, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.rsplit("SESSION ", 1)[1])
    assert report["codes"] == {"ingest": 0, "index": 0, "search": 0, "ask": 0}, done.stderr[-3000:]
    assert "does not run in this process" not in done.stderr, "Quire's models were refused: this proves nothing"
    assert attempts(log) == "", f"network attempts:\n{attempts(log)}"
    assert not (cache / "Microsoft").exists(), "ONNX Runtime wrote its telemetry device id / event queue"


@pytest.mark.slow
def test_desktop_session_never_touches_the_network(netguard: Path, namespace_prefix: list[str], cache_dir: Path,
                                                   tmp_path: Path, papers_dir: Path) -> None:
    log = tmp_path / "net.log"
    home = tmp_path / "home"
    papers = [str(papers_dir / name) for name in ("mooney05.pdf", "bunescu-acl07.pdf")]
    app = subprocess.Popen([*namespace_prefix, sys.executable, "-m", "desktop.app", "--home", str(home), *papers],
                           env=guarded_env(netguard, cache_dir, log), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and app.poll() is None and _embedded(home) < 2:
            time.sleep(1)  # the window ingests the papers, then embeds them in the background
        embedded = _embedded(home)
        time.sleep(HOLD_SECONDS)  # then sits open, as a window does
        still_running = app.poll() is None
    finally:
        app.send_signal(signal.SIGINT)  # closes the window the way Ctrl+C in its terminal does
        try:
            _, stderr = app.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            app.kill()
            _, stderr = app.communicate()
    assert still_running, stderr[-3000:]
    assert embedded == 2, f"the app did not embed both papers:\n{stderr[-3000:]}"
    assert attempts(log) == "", f"network attempts:\n{attempts(log)}"
    assert not (cache_dir / "Microsoft").exists(), "ONNX Runtime wrote its telemetry device id / event queue"


def _embedded(home: Path) -> int:
    """Documents of the library with vectors in the embedding cache (0 while the files cannot be read)."""
    catalog, cache = home / "library.db", home / "embeddings.db"
    if not catalog.exists() or not cache.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{catalog}?mode=ro", uri=True, timeout=1) as conn:
            conn.execute("ATTACH DATABASE ? AS cache", (f"file:{cache}?mode=ro",))
            return int(conn.execute(
                "SELECT count(*) FROM documents d WHERE EXISTS (SELECT 1 FROM passages p WHERE p.doc_id = d.id "
                "AND p.content_hash IN (SELECT content_hash FROM cache.embeddings))"
            ).fetchone()[0])
    except sqlite3.Error:
        return 0
