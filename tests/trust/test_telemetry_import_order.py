"""ONNX Runtime's telemetry must be off whichever Quire module a process imports first.

The official wheels (1.32) start their telemetry uploader, and write a device id and an event
queue under ``$XDG_CACHE_HOME/Microsoft/``, as soon as ``onnxruntime`` is imported; PyMuPDF 2
imports it at ``import pymupdf``. ``import engine`` sets the opt-out, so every package of Quire
must import the engine before anything that could load the runtime: before, ``import
ui.pdf_viewer`` (PyMuPDF first) wrote the files. Seen from the files, without a network: the
look-ups themselves are checked below Python in test_offline_native.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.trust.test_offline_native import QUIETING_VARIABLES

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the wheels' telemetry is measured "
                                                                             "on Linux")


def run_python(code: str, cache: Path, *args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in QUIETING_VARIABLES}
    env.update(XDG_CACHE_HOME=str(cache), QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO), **variables)
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=300,
                          check=False, cwd=REPO)


def telemetry_files(cache: Path) -> list[str]:
    return sorted(str(p.relative_to(cache)) for p in (cache / "Microsoft").rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def runtime_reports_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The probe: a bare ``import onnxruntime`` does write the files here (else there is nothing to test)."""
    cache = tmp_path_factory.mktemp("probe-cache")
    assert run_python("import onnxruntime", cache).returncode == 0
    if not telemetry_files(cache):
        pytest.skip("this ONNX Runtime build writes no telemetry files at import")


@pytest.mark.usefixtures("runtime_reports_home")
@pytest.mark.parametrize("first_import", ["ui.pdf_viewer", "ui.main_window", "desktop.app", "engine.ingest.pdf",
                                          "engine.embed.onnx_int8"])
def test_no_telemetry_whichever_quire_module_comes_first(tmp_path: Path, first_import: str) -> None:
    done = run_python(f"import {first_import}", tmp_path)
    assert done.returncode == 0, done.stderr
    assert telemetry_files(tmp_path) == []


@pytest.mark.usefixtures("runtime_reports_home")
def test_onnx_runtime_imported_before_the_engine_is_reported(tmp_path: Path) -> None:
    """Too late to switch off in that process: the user of such a script is told how to fix it."""
    done = run_python("import onnxruntime\nimport engine", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "onnxruntime was imported before Quire's engine" in done.stderr
    assert "ORT_DISABLE_TELEMETRY=1" in done.stderr
    quiet = run_python("import engine\nimport onnxruntime", tmp_path / "engine-first")
    assert quiet.stderr == "" and telemetry_files(tmp_path / "engine-first") == []


# A notebook that imported onnxruntime itself, then uses Quire: every inference session the process
# opens is counted (the runtime's own class, wrapped, not replaced), then the judge and the embedder
# are asked to run.
RUNTIME_FIRST = """
import json, sys
import onnxruntime

sessions = []
opened = onnxruntime.InferenceSession.__init__

def counted(self, *args, **kwargs):
    sessions.append(str(args[0]) if args else "")
    opened(self, *args, **kwargs)

onnxruntime.InferenceSession.__init__ = counted

from engine.cite.judge import PairModel
from engine.errors import TelemetryLiveError
from engine.service import Engine

outcomes = {}
try:
    PairModel()
    outcomes["judge"] = "ran"
except TelemetryLiveError as exc:
    outcomes["judge"] = str(exc)
with Engine(sys.argv[1]) as library:
    try:
        library.embedder.embed(["a sentence to embed"])
        outcomes["embedder"] = "ran"
    except TelemetryLiveError as exc:
        outcomes["embedder"] = str(exc)
print("REPORT " + json.dumps({"outcomes": outcomes, "sessions": sessions}))
"""


def runtime_first_report(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, object] = json.loads(done.stdout.rsplit("REPORT ", 1)[1])
    return report


@pytest.mark.usefixtures("runtime_reports_home")
def test_quire_runs_none_of_its_models_where_onnx_runtime_came_first(tmp_path: Path) -> None:
    """The runtime's uploader already runs and would report each session: Quire opens none, and says why."""
    report = runtime_first_report(run_python(RUNTIME_FIRST, tmp_path / "cache", str(tmp_path / "home")))
    assert report["sessions"] == []
    outcomes = report["outcomes"]
    assert isinstance(outcomes, dict)
    for model in ("judge", "embedder"):
        assert "onnxruntime was imported before Quire's engine" in outcomes[model]
        assert "ORT_DISABLE_TELEMETRY=1" in outcomes[model]


@pytest.mark.usefixtures("runtime_reports_home")
def test_models_run_where_onnx_runtime_came_first_with_its_opt_out_set(tmp_path: Path) -> None:
    """The fix the message gives works: the opt-out set before Python starts, the runtime may come first."""
    report = runtime_first_report(run_python(RUNTIME_FIRST, tmp_path / "cache", str(tmp_path / "home"),
                                             ORT_DISABLE_TELEMETRY="1"))
    assert report["outcomes"] == {"judge": "ran", "embedder": "ran"}
    assert len(report["sessions"]) >= 2  # type: ignore[arg-type]
    assert telemetry_files(tmp_path / "cache") == []
