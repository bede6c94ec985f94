"""Importing the engine leaves the environment alone; Quire's programs set it when they start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.process import prepare_process

REPO = Path(__file__).resolve().parents[2]
_SET_BY_PROGRAMS = ("HF_HUB_OFFLINE", "OMP_WAIT_POLICY")


def _environment_after(code: str) -> dict[str, str | None]:
    env = {k: v for k, v in os.environ.items() if k not in _SET_BY_PROGRAMS}
    env["PYTHONPATH"] = str(REPO)
    probe = f"{code}\nimport os, json\nprint(json.dumps({{k: os.environ.get(k) for k in {_SET_BY_PROGRAMS!r}}}))"
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120,
                          check=True, cwd=REPO)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_engine_its_models_and_the_cli_sets_no_program_variable() -> None:
    seen = _environment_after("import engine.service, engine.generate.llama, engine.embed.sentence, engine.cli.main")
    assert seen == {"HF_HUB_OFFLINE": None, "OMP_WAIT_POLICY": None}


def test_the_cli_sets_them_when_it_runs(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    seen = _environment_after(f"from engine.cli.main import main\nmain(['--home', {home!r}, 'library', 'list'])")
    assert seen == {"HF_HUB_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE"}


def test_a_value_the_user_exported_wins_and_the_telemetry_opt_out_is_forced(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "0")
    prepare_process()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    assert os.environ["ORT_DISABLE_TELEMETRY"] == "1"
