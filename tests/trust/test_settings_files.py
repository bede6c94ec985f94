"""Hostile and odd settings files: read bounded, regular files only, refused by name; broken copies kept.

CI spot checks: none of these is slow.
"""

from __future__ import annotations

import codecs
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from engine.config import Settings, load_settings, save_settings
from engine.errors import SettingsError
from engine.service import Engine


def load_within(path: Path, seconds: float = 20) -> Settings | BaseException:
    """load_settings(path) on a thread: what it returned or raised, or a failure if it never returned."""
    outcome: list[Settings | BaseException] = []

    def run() -> None:
        try:
            outcome.append(load_settings(path))
        except BaseException as exc:  # handed to the test
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive() and path.is_fifo():
        with open(path, "wb"):  # let a blocked open() return, so the thread ends
            pass
        worker.join(5)
    assert outcome, f"reading {path} never returned"
    return outcome[0]


@pytest.mark.parametrize("nested", ["[" * 20_000 + "]" * 20_000, "{a = " * 20_000 + "1" + "}" * 20_000],
                         ids=["arrays-20000-deep", "inline-tables-20000-deep"])
def test_values_nested_20000_deep_set_the_file_aside(tmp_path: Path, nested: str) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(f"[generation]\nmodel = {nested}\n")
    assert load_within(path) == Settings()  # not a RecursionError
    assert not path.exists() and (tmp_path / "settings.toml.broken").read_text().startswith("[generation]")


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_a_settings_file_that_is_not_a_regular_file_is_refused_by_name(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "settings.toml"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    outcome = load_within(path)
    assert isinstance(outcome, SettingsError), outcome
    assert str(path) in str(outcome) and "not a regular file" in str(outcome)


@pytest.mark.parametrize("model", ["\\u0000", "m" * 5000], ids=["nul", "5000-characters"])
def test_a_model_name_no_path_can_hold_is_refused_by_name(tmp_path: Path, model: str) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(f'[generation]\nmodel = "{model}"\n')
    with pytest.raises(SettingsError, match=r"\[generation\] model is (holding a control|longer than)"):
        load_settings(path)


def test_a_settings_file_of_5_mb_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('[generation]\nmodel = "' + "m" * (5 << 20) + '"\n')
    with pytest.raises(SettingsError, match="larger than 1 MB"):
        load_settings(path)


def test_concurrent_saves_never_share_a_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"

    def save(number: int) -> None:
        settings = Settings()
        save_settings(replace(settings, retrieval=replace(settings.retrieval, top_n=1 + number % 100)), path)

    with ThreadPoolExecutor(max_workers=6) as pool:
        failures = [f.exception() for f in [pool.submit(save, n) for n in range(150)]]
    assert [f for f in failures if f is not None] == []
    assert 1 <= load_settings(path).retrieval.top_n <= 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.toml"]  # no temporary file left


def test_every_broken_settings_file_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    for number in range(3):
        path.write_text(f"this is not TOML, copy {number}")
        assert load_settings(path) == Settings()
    kept = {p.name: p.read_text() for p in tmp_path.iterdir()}
    assert kept == {"settings.toml.broken": "this is not TOML, copy 0", "settings.toml.broken.2": "this is not TOML, "
                    "copy 1", "settings.toml.broken.3": "this is not TOML, copy 2"}


@pytest.mark.parametrize("encoding", ["utf-8-bom", "utf-16-le", "utf-16-be"])
def test_a_settings_file_with_a_byte_order_mark_is_read(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "settings.toml"
    text = "[retrieval]\ntop_n = 7\n"
    boms = {"utf-8-bom": (codecs.BOM_UTF8, "utf-8"), "utf-16-le": (codecs.BOM_UTF16_LE, "utf-16-le"),
            "utf-16-be": (codecs.BOM_UTF16_BE, "utf-16-be")}
    bom, codec = boms[encoding]
    path.write_bytes(bom + text.encode(codec))
    assert load_settings(path).retrieval.top_n == 7
    assert path.exists()  # read, not set aside


def test_unknown_keys_are_named_escaped_and_at_most_twenty(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "settings.toml"
    keys = "".join(f"k{number}=1\n" for number in range(100_000))  # 100,000 unknown keys within the 1 MB cap
    path.write_text('[retrieval]\n"evil\\u001b[2Jkey" = 1\n' + keys)
    with caplog.at_level("WARNING", logger="engine.config"):
        assert load_settings(path) == Settings()
    [line] = [record.getMessage() for record in caplog.records]
    assert "\x1b" not in line and "evil\\x1b[2Jkey" in line
    assert "99,981 more" in line and len(line) < 2000


def test_the_engine_keeps_a_notice_naming_each_broken_copy_and_none_for_a_good_file(tmp_path: Path) -> None:
    """What the app shows: a log line alone is lost on a desktop, and the user's settings look forgotten."""
    home = tmp_path / "home"
    home.mkdir()
    for copy in ("settings.toml.broken", "settings.toml.broken.2"):
        (home / "settings.toml").write_text("[generation\nmodel = 'mine.gguf'\n", encoding="utf-8")
        with Engine(home) as engine:
            assert engine.settings == Settings()
            assert "started with the default settings" in engine.settings_notice
            assert f"kept as {copy}" in engine.settings_notice
            assert str(home / "settings.toml") in engine.settings_notice
    with Engine(home) as engine:  # defaults from then on, and nothing more to tell
        assert engine.settings_notice == ""
    save_settings(Settings(), home / "settings.toml")
    with Engine(home) as engine:
        assert engine.settings_notice == ""
