"""`quire settings`: the settings in effect, and the named presets that set several at once.

    quire settings                    where the settings file is, every setting in effect, and what the
                                      options with a measured cost cost (retrieval while writing)
    quire settings --presets          the presets, what each is for and what it would change
    quire settings --preset NAME      apply one: set its keys, keep every other setting, save
    quire settings --set retrieval.embedder=multilingual-e5-small
                                      change one setting (checked as the settings file is) and save
"""

from __future__ import annotations

import argparse
import tomllib
from dataclasses import fields

import tomli_w

from engine.config import SECTIONS, Settings
from engine.errors import SettingsError
from engine.presets import preset, presets
from engine.service import Engine

# Settings whose description carries a measured cost the user weighs before turning them on; printed below
# the settings as TOML comments.
COSTED = (("generation", "retrieval_stride"),)


def register(commands: argparse._SubParsersAction) -> None:
    settings = commands.add_parser("settings", help="show the settings, or apply a named preset",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    choice = settings.add_mutually_exclusive_group()
    choice.add_argument("--presets", action="store_true", help="list the presets and what each would change")
    choice.add_argument("--preset", metavar="NAME", help="apply a preset (quick, careful, evidence, default, ...)")
    choice.add_argument("--set", metavar="SECTION.KEY=VALUE", action="append", dest="assignments",
                        help="change one setting and save, e.g. retrieval.embedder=multilingual-e5-small or "
                             "retrieval.top_n=8 (VALUE as in the TOML file; an empty VALUE is an empty text)")
    settings.set_defaults(handler=_settings)


def _settings(engine: Engine, args: argparse.Namespace) -> int:
    if args.presets:
        for item in presets():
            changes = item.changes(engine.settings)
            print(f"{item.name}: {item.description}")
            print("  would change: " + (", ".join(f"{key} {now!r} -> {after!r}" for key, now, after in changes)
                                        if changes else "nothing (already in effect)"))
        return 0
    if args.assignments:
        changed = assigned(engine.settings, args.assignments)
        for key, now, after in changes_between(engine.settings, changed):
            print(f"{key}: {now!r} -> {after!r}")
        engine.save_settings(changed)
        print(f"saved to {engine.paths.config_file}")
        return 0
    if args.preset:
        chosen = preset(args.preset)
        changes = chosen.changes(engine.settings)
        engine.save_settings(chosen.applied_to(engine.settings))
        if not changes:
            print(f"The preset {args.preset!r} is already in effect; nothing changed.")
        for key, now, after in changes:
            print(f"{key}: {now!r} -> {after!r}")
        print(f"saved to {engine.paths.config_file}")
        return 0
    print(f"# {engine.paths.config_file}")
    print(tomli_w.dumps({k: v for k, v in engine.settings.to_dict().items() if k != "version"}), end="")
    for section, key in COSTED:
        described = next(f for f in fields(SECTIONS[section]) if f.name == key).metadata["description"]
        print(f"\n# [{section}] {key}: {described}")
    return 0


def assigned(settings: Settings, assignments: list[str]) -> Settings:
    """``settings`` with each ``section.key=value`` applied, checked as a settings file's values are."""
    data = settings.to_dict()
    for assignment in assignments:
        name, equals, raw = assignment.partition("=")
        section, dot, key = name.strip().partition(".")
        if not equals or not dot or section not in SECTIONS or key not in data[section]:
            known = ", ".join(f"{s}.{k}" for s in SECTIONS for k in data[s])
            raise SettingsError(f"--set {assignment!r}: give SECTION.KEY=VALUE with one of: {known}.")
        data[section][key] = _value(raw.strip(), data[section][key])
    changed = Settings.from_dict(data, where="--set")
    from engine.embed.sentence import embedder_setting_problem

    problem = embedder_setting_problem(changed.retrieval.embedder)
    if problem and changed.retrieval.embedder != settings.retrieval.embedder:
        raise SettingsError(f"--set: not saved: {problem}")
    return changed


def _value(raw: str, current: object) -> object:
    """A TOML value (8, true, "text"); for a text setting, anything else is taken as the text itself."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        if isinstance(current, str):
            return raw
        raise SettingsError(f"--set: {raw!r} is not a value; write a number, true or false.") from None


def changes_between(before: Settings, after: Settings) -> list[tuple[str, object, object]]:
    old, new = before.to_dict(), after.to_dict()
    return [(f"{section}.{key}", old[section][key], new[section][key]) for section in SECTIONS
            for key in new[section] if old[section][key] != new[section][key]]
