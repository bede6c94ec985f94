"""Wrong settings, wrong places: a settings file of the wrong types, a chosen embedder that is no
model, a data folder that is a file or sits on a read-only disk.

Each is met with one clear message naming what to fix and exit code 1, never a traceback and
never a good PDF failed for it. Tests run as root here, where permission bits stop nothing: a
read-only place is a real read-only mount inside a private mount namespace (``unshare -m``),
skipped only where the kernel does not allow one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf
from fixtures.small_disk import run_on_full_disk

from engine.config import load_settings
from engine.models import default_lm_path

REPO = Path(__file__).resolve().parents[2]


def quire(home: Path | str, *args: str, prefix: tuple[str, ...] = (),
          timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, sys.executable, "-m", "engine.cli.main", "--home", str(home), *args],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=timeout, check=False, cwd=REPO)


def clean_failure(done: subprocess.CompletedProcess[str], *phrases: str) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    for phrase in phrases:
        assert phrase in done.stderr, done.stderr


# --- the settings file ------------------------------------------------------------------------


@pytest.mark.parametrize(("section", "line", "named"), [
    ("retrieval", 'top_n = "lots"', "[retrieval] top_n must be a whole number"),
    ("ingest", 'passage_words = "x"', "[ingest] passage_words must be a whole number"),
    ("ingest", "passage_words = 0", "[ingest] passage_words must be at least 20"),
    ("retrieval", "spelling = 1", "[retrieval] spelling must be true or false"),
    ("retrieval", "top_n = true", "[retrieval] top_n must be a whole number"),
])
def test_a_wrong_setting_is_named_before_any_work(tmp_path: Path, section: str, line: str, named: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    settings = home / "settings.toml"
    settings.write_text(f"[{section}]\n{line}\n")
    paper = text_pdf(tmp_path / "good.pdf", [paper_text("settings")])

    ingest = quire(home, "ingest", "--no-embed", str(paper))
    search = quire(home, "search", "retrieval systems")

    for done in (ingest, search):
        clean_failure(done, named, str(settings))
        assert "please report this file" not in done.stdout + done.stderr
    assert settings.read_text() == f"[{section}]\n{line}\n"  # left for the user to fix, not thrown away


def test_a_section_that_is_not_a_table_is_named(tmp_path: Path) -> None:
    settings = tmp_path / "settings.toml"
    settings.write_text('retrieval = "fast"\n')
    with pytest.raises(Exception, match=r"\[retrieval\] must be a section"):
        load_settings(settings)


# --- choosing an embedder ----------------------------------------------------------------------


@pytest.mark.slow  # loads torch to try the folder as a model
def test_models_use_refuses_a_folder_that_is_not_an_embedder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    empty = tmp_path / "just-a-folder"
    empty.mkdir()
    fake = tmp_path / "fake-model"
    fake.mkdir()
    (fake / "modules.json").write_text(json.dumps([{"idx": 0, "name": "0", "path": "", "type":
                                                    "sentence_transformers.models.Transformer"}]))
    (fake / "config.json").write_text("{}")
    (fake / "model.safetensors").write_bytes(b"\0" * 64)

    for folder in (empty, fake):
        clean_failure(quire(home, "models", "use", str(folder)), str(folder))
    assert not (home / "settings.toml").exists() or str(fake) not in (home / "settings.toml").read_text()


def test_doctor_reports_a_chosen_embedder_that_is_gone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.toml").write_text(f'[retrieval]\nembedder = "{tmp_path / "deleted-model"}"\n')

    done = quire(home, "doctor", "--json")

    report = json.loads(done.stdout)
    assert done.returncode == 1
    assert any("retrieval.embedder" in problem and "deleted-model" in problem for problem in report["problems"])


# --- where the data lives -----------------------------------------------------------------------


def test_home_that_is_a_file_or_lies_under_one_is_a_clear_error(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder")
    clean_failure(quire(a_file, "library", "list"), "is a file, not a folder")
    clean_failure(quire(a_file / "library", "library", "list"), "part of that path is a file")


def _mount_namespace() -> tuple[str, ...]:
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-m", "true"], capture_output=True, check=False).returncode:
        pytest.skip("this kernel does not let the test make a private mount namespace (unshare -m) for a real "
                    "read-only mount; permission bits stop nothing for root")
    return (unshare, "-m")


def _read_only(folder: Path) -> tuple[str, ...]:
    """A command prefix running the rest with ``folder`` mounted read-only (visible to that process only)."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    return (*_mount_namespace(), "sh", "-c", script, str(folder))


def test_home_under_a_read_only_parent_is_a_clear_error(tmp_path: Path) -> None:
    parent = tmp_path / "read-only"
    parent.mkdir()
    done = quire(parent / "library", "library", "list", prefix=_read_only(parent))
    clean_failure(done, "cannot create its data folder", "read-only")


def test_a_read_only_library_is_not_called_damaged(tmp_path: Path) -> None:
    home = tmp_path / "home"
    paper = text_pdf(tmp_path / "good.pdf", [paper_text("read-only libraries")])
    assert quire(home, "ingest", "--no-embed", str(paper)).returncode == 0

    done = quire(home, "ingest", "--no-embed", str(paper), prefix=_read_only(home))

    clean_failure(done, "read-only", "not damaged")
    assert "move it aside" not in done.stderr
    assert quire(home, "library", "list").returncode == 0  # and the library is indeed fine


# --- settings that are not what they seem --------------------------------------------------------


def test_a_settings_path_that_is_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "settings.toml").mkdir(parents=True)
    for command in (("doctor",), ("library", "list")):
        clean_failure(quire(home, *command), "settings.toml is a folder", "move the folder")


def test_an_empty_home_is_refused_not_taken_for_the_real_library(tmp_path: Path) -> None:
    """``--home ""`` (an unset shell variable) must not fall back to the user's own library."""
    real = tmp_path / "real-library"
    done = subprocess.run([sys.executable, "-m", "engine.cli.main", "--home", "", "library", "list"],
                          env={**os.environ, "PYTHONPATH": str(REPO), "QUIRE_HOME": str(real)},
                          capture_output=True, text=True, timeout=120, check=False, cwd=REPO)
    clean_failure(done, "--home was given an empty path")
    assert not real.exists()


def test_unknown_sections_and_keys_are_named_in_a_warning(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.toml").write_text("[retrieval]\ntop_nn = 3\ntop_n = 5\n[generaton]\nmodel = \"x.gguf\"\n")
    done = quire(home, "library", "list")
    assert done.returncode == 0, done.stderr
    assert "[generaton]" in done.stderr and "[retrieval] top_nn" in done.stderr, done.stderr
    assert "top_n " not in done.stderr.replace("top_nn", "")  # the known key is not named


@pytest.mark.parametrize(("section", "line", "named"), [
    ("generation", "context_size = 9000000000000000000", "[generation] context_size must be at most 1,048,576"),
    ("generation", "context_size = 1e20", "[generation] context_size must be a whole number"),
    ("retrieval", "top_n = 100000000", "[retrieval] top_n must be at most 200"),
    ("ingest", "passage_words = 1000000", "[ingest] passage_words must be at most 5,000"),
    ("generation", "threads = 100000", "[generation] threads must be at most 1,024"),
    ("generation", "gpu_layers = -5", "[generation] gpu_layers must be at least -1"),
    ("generation", "max_answer_tokens = 99999999", "[generation] max_answer_tokens must be at most 65,536"),
])
def test_absurd_numbers_are_refused_naming_the_bound(tmp_path: Path, section: str, line: str, named: str) -> None:
    settings = tmp_path / "settings.toml"
    settings.write_text(f"[{section}]\n{line}\n")
    with pytest.raises(Exception, match=re.escape(named)):
        load_settings(settings)


def test_models_use_on_a_full_disk_says_so_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    """The settings folder is a real full disk: a tmpfs with no byte free, in a private mount namespace."""
    config, data = tmp_path / "config", tmp_path / "data"
    stage = tmp_path / "config-content"
    (stage / "Quire").mkdir(parents=True)
    (stage / "Quire" / "settings.toml").write_text("[retrieval]\ntop_n = 7\n")
    env = {key: value for key, value in os.environ.items() if key != "QUIRE_HOME"}
    env.update(PYTHONPATH=str(REPO), XDG_CONFIG_HOME=str(config), XDG_DATA_HOME=str(data))
    model = default_lm_path()
    assert model is not None

    done = run_on_full_disk(config, [sys.executable, "-m", "engine.cli.main", "models", "use", str(model)],
                            stage=stage, env=env)

    clean_failure(done, "is full", "Free about", "settings file")
    assert "delete" not in done.stderr
    assert sorted(p.name for p in (stage / "Quire").iterdir()) == ["settings.toml"]  # no settings.toml.tmp
    assert (stage / "Quire" / "settings.toml").read_text() == "[retrieval]\ntop_n = 7\n"  # the old one intact
