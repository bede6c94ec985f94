"""A write killed between creating its temporary file and renaming it leaves `.NAME.PID.tmp` in the
user's folder (an export's output folder, the settings folder); the next write there deletes those
of processes that have ended, and never one of a process still running."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engine.cli.main import main
from engine.config import Settings, save_settings
from engine.disk import remove_dead_temporaries


def dead_pid() -> int:
    """The id of a process that has ended."""
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True)
    return int(finished.stdout)


def test_an_export_deletes_what_a_killed_export_left_in_the_output_folder(tmp_path: Path) -> None:
    out = tmp_path / "refs.bib"
    left = tmp_path / f".refs.bib.{dead_pid()}.tmp"
    left.write_text("@article{half")
    running = tmp_path / f".refs.bib.{os.getppid()}.tmp"  # another export, still writing
    running.write_text("@article{busy")
    assert main(["--home", str(tmp_path / "home"), "library", "export", "-o", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "home") == [running.name, "refs.bib"]


def test_saving_settings_deletes_a_killed_save_s_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    (tmp_path / f".settings.toml.{dead_pid()}.0a1b2c3d.tmp").write_text("[retrieval]\n")
    save_settings(Settings(), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.toml"]


def test_only_temporaries_of_that_file_are_touched(tmp_path: Path) -> None:
    pid = dead_pid()
    keep = [tmp_path / f".other.bib.{pid}.tmp", tmp_path / f"refs.bib.{pid}.tmp", tmp_path / ".refs.bib.x.tmp"]
    for path in keep:
        path.write_text("not ours")
    assert remove_dead_temporaries(tmp_path / "refs.bib") == []
    assert all(path.exists() for path in keep)
