"""`quire settings`: the settings in effect, and the named presets that set several at once.

    quire settings                    where the settings file is, every setting in effect, and what the
                                      options with a measured cost cost (retrieval while writing)
    quire settings --presets          the presets, what each is for and what it would change
    quire settings --preset NAME      apply one: set its keys, keep every other setting, save
"""

from __future__ import annotations

import argparse
from dataclasses import fields

import tomli_w

from engine.config import SECTIONS
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
    settings.set_defaults(handler=_settings)


def _settings(engine: Engine, args: argparse.Namespace) -> int:
    if args.presets:
        for item in presets():
            changes = item.changes(engine.settings)
            print(f"{item.name}: {item.description}")
            print("  would change: " + (", ".join(f"{key} {now!r} -> {after!r}" for key, now, after in changes)
                                        if changes else "nothing (already in effect)"))
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
