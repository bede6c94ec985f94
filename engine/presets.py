"""Named presets: small settings files in ``resources/presets`` that set a few keys at once.

A preset names only the keys it changes; applying one keeps every other setting (a chosen model,
thread count, OCR) as the user left it. Its first comment lines are its description. ``default``
holds the defaults of every key the other presets touch, so choosing it undoes them. A file's first
comment lines, up to an empty ``#`` line, are its description; comments after that are its sources.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from engine.config import Settings, unknown_keys
from engine.errors import SettingsError


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    values: dict[str, dict[str, Any]]  # section -> key -> value

    def changes(self, settings: Settings) -> list[tuple[str, Any, Any]]:
        """("section.key", now, after) for each key this preset would change in ``settings``."""
        current = settings.to_dict()
        return [(f"{section}.{key}", current[section][key], value)
                for section, keys in self.values.items() for key, value in keys.items()
                if current[section][key] != value]

    def applied_to(self, settings: Settings) -> Settings:
        """``settings`` with this preset's keys set and every other key kept."""
        merged = settings.to_dict()
        for section, keys in self.values.items():
            merged[section].update(keys)
        return Settings.from_dict(merged, where=f"preset {self.name}")


def presets() -> list[Preset]:
    """Every bundled preset, by name."""
    folder = resources.files("resources") / "presets"
    found = sorted((entry for entry in folder.iterdir() if entry.name.endswith(".toml")), key=lambda e: e.name)
    return [_read(entry.name.removesuffix(".toml"), entry.read_text(encoding="utf-8")) for entry in found]


def preset(name: str) -> Preset:
    by_name = {p.name: p for p in presets()}
    if name not in by_name:
        raise SettingsError(f"There is no preset named {name!r}; the presets are {', '.join(sorted(by_name))} "
                            "(quire settings --presets describes them).")
    return by_name[name]


def apply_preset(settings: Settings, name: str) -> Settings:
    """``settings`` with the named preset's keys set and every other key kept."""
    return preset(name).applied_to(settings)


def _read(name: str, text: str) -> Preset:
    """A preset file; one that names a key Quire does not have is refused, not half applied."""
    comments = []
    for line in text.splitlines():
        if not line.startswith("#") or not line.lstrip("#").strip():
            break  # the description ends at the first line that is not a comment, or an empty comment
        comments.append(line.lstrip("#").strip())
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"The preset {name!r} cannot be read ({exc}); reinstall Quire.") from None
    Settings.from_dict(data, where=f"preset {name}")  # the same type and range checks as settings.toml
    unknown = unknown_keys(data)
    if unknown:
        raise SettingsError(f"The preset {name!r} names settings Quire does not have ({', '.join(unknown)}); "
                            "reinstall Quire.")
    return Preset(name, " ".join(comments), data)
