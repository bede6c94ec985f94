"""`quire`: the command line over the Engine facade.

Each group of commands lives in its own module with a `register(subparsers)` function that adds
its parsers and sets a `handler(engine, args) -> exit code` default; add new modules to
COMMAND_MODULES.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from engine.errors import Cancelled, EngineError
from engine.process import prepare_process
from engine.service import Engine

COMMAND_MODULES = (
    "engine.cli.library_commands",
    "engine.cli.search_commands",
    "engine.cli.datastore_commands",
    "engine.cli.models_commands",
    "engine.cli.ask_commands",
    "engine.cli.table_commands",
    "engine.cli.check_commands",
    "engine.cli.zotero_commands",
    "engine.cli.settings_commands",
    "engine.cli.mcp_commands",
    "engine.cli.annotate_commands",
)


class _Parser(argparse.ArgumentParser):
    """A parser that takes an option only as spelled in full: by prefix, "--mode digest" was read as
    "--model digest" and failed on a model file named "digest"; it is now refused as an unknown option,
    with the usage that names --digest."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="quire", description="Quire: an offline research assistant for your PDFs.")
    parser.add_argument("--home", metavar="DIR", help="library folder (default: $QUIRE_HOME or your user data dir)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    prepare_process()  # before anything loads llama.cpp, ONNX Runtime or the hub client
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    _tolerate_undecodable_output()
    try:
        with Engine(args.home) as engine:
            code = int(args.handler(engine, args))
        sys.stdout.flush()  # here, where a closed pipe can still be told apart from a failure
        return code
    except BrokenPipeError:
        return _reader_went_away()
    except Cancelled as exc:
        print(f"quire: {exc}", file=sys.stderr)
        return 130
    except EngineError as exc:
        print(f"quire: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("quire: interrupted; everything finished before was kept.", file=sys.stderr)
        return 130


def _reader_went_away() -> int:
    """``quire ... | head`` closed the pipe: stop quietly, as Unix tools do, and keep Python's exit flush quiet too."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141  # 128 + SIGPIPE: what a shell reports for a tool a closed pipe stopped


def _tolerate_undecodable_output() -> None:
    """File names may hold bytes that are not valid UTF-8 (surrogate-escaped by Python); print them
    escaped instead of crashing the whole command on the first odd name."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
