"""Named presets: bundled files that set a few settings at once and keep the rest."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.config import GenerationSettings, Settings, load_settings
from engine.errors import SettingsError
from engine.presets import _read, apply_preset, preset, presets


def test_every_bundled_preset_reads_and_says_what_it_is_for() -> None:
    found = {p.name: p for p in presets()}
    assert {"default", "quick", "careful", "evidence"} <= set(found)
    for item in found.values():
        assert len(item.description) > 20, item.name
        assert "docs/" not in item.description  # sources go below the description, not in it


def test_default_undoes_every_key_another_preset_sets() -> None:
    defaults = Settings().to_dict()
    undo = preset("default").values
    for item in presets():
        for section, keys in item.values.items():
            for key in keys:
                assert undo[section][key] == defaults[section][key], f"{item.name}: {section}.{key}"


def test_a_preset_sets_its_keys_and_keeps_every_other_setting() -> None:
    mine = replace(Settings(), generation=GenerationSettings(model="/models/writer.gguf", threads=3))
    quick = apply_preset(mine, "quick")
    assert (quick.retrieval.rewrite, quick.retrieval.top_n, quick.generation.read_unsupported) == (False, 8, False)
    assert (quick.generation.model, quick.generation.threads) == ("/models/writer.gguf", 3)
    assert apply_preset(quick, "default").to_dict() == mine.to_dict()


def test_an_unknown_preset_is_refused_with_the_names_there_are() -> None:
    with pytest.raises(SettingsError, match=r"no preset named 'fastest'.*careful, default, evidence, quick"):
        preset("fastest")


@pytest.mark.parametrize(("text", "words"), [
    ("# x\n[generation]\nfeedbak = true\n", "feedbak"),
    ("# x\n[answers]\ntop_n = 3\n", r"\[answers\]"),
    ("# x\n[retrieval]\ntop_n = \"many\"\n", "top_n must be a whole number"),
    ("# x\n[retrieval\n", "cannot be read"),
])
def test_a_damaged_preset_file_is_refused_not_half_applied(text: str, words: str) -> None:
    with pytest.raises(SettingsError, match=words):
        _read("broken", text)


def test_the_settings_command_applies_a_preset_and_saves_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = str(tmp_path)
    assert main(["--home", home, "settings", "--preset", "evidence"]) == 0
    assert "generation.digest: False -> True" in capsys.readouterr().out
    assert load_settings(tmp_path / "settings.toml").generation.digest is True
    assert main(["--home", home, "settings", "--presets"]) == 0
    listing = capsys.readouterr().out
    assert "evidence: Evidence only" in listing and "default:" in listing
    assert main(["--home", home, "settings", "--preset", "nope"]) == 1
    assert "no preset named 'nope'" in capsys.readouterr().err
    assert load_settings(tmp_path / "settings.toml").generation.digest is True  # a refused preset changes nothing


def test_a_preset_whose_section_is_not_a_table_is_refused() -> None:
    with pytest.raises(SettingsError, match=r"\[retrieval\] must be a section"):
        _read("broken", "# x\nretrieval = 3\n")


def test_the_settings_command_says_what_retrieval_while_writing_costs(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import tomllib

    assert main(["--home", str(tmp_path), "settings"]) == 0
    out = capsys.readouterr().out
    shown = tomllib.loads(out.split("\n", 1)[1])  # the settings stay valid TOML with the comment below them
    assert shown["generation"]["retrieval_stride"] == 0
    assert "# [generation] retrieval_stride: Retrieval while writing" in out and "docs/answers.md" in out


def test_the_settings_command_sets_one_key_checked_as_the_file_is(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    home = str(tmp_path)
    assert main(["--home", home, "settings", "--set", "retrieval.top_n=8", "--set",
                 "retrieval.embedder=multilingual-e5-small"]) == 0
    out = capsys.readouterr().out
    assert "retrieval.top_n: 12 -> 8" in out and "retrieval.embedder: '' -> 'multilingual-e5-small'" in out
    saved = load_settings(tmp_path / "settings.toml")
    assert (saved.retrieval.top_n, saved.retrieval.embedder) == (8, "multilingual-e5-small")
    assert main(["--home", home, "settings", "--set", "retrieval.embedder="]) == 0
    assert load_settings(tmp_path / "settings.toml").retrieval.embedder == ""
    for refused, words in (("retrieval.top_n=0", "at least 1"), ("retrieval.top_n=many", "not a value"),
                           ("top_n=8", "SECTION.KEY=VALUE"), ("retrieval.embedder=/no/such/model", "not saved")):
        assert main(["--home", home, "settings", "--set", refused]) == 1
        assert words in capsys.readouterr().err
    assert load_settings(tmp_path / "settings.toml").retrieval.top_n == 8  # nothing refused was saved
