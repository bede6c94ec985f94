"""`quire models list|download|use|remove` and `quire hardware`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from engine.cli.progress_bar import DownloadBar
from engine.progress import CancelToken, human_size
from engine.service import Engine


def register(commands: argparse._SubParsersAction) -> None:
    models = commands.add_parser("models", help="list, download and choose language models and embedders")
    actions = models.add_subparsers(dest="models_command", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="installed models and the catalog of recommended ones")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=lambda engine, args: _list(engine, args.json))
    download = actions.add_parser("download", help="download, verify and install a catalog model (needs network)")
    download.add_argument("name", metavar="NAME", help="a catalog name from `quire models list`")
    download.add_argument("--json", action="store_true")
    download.set_defaults(handler=lambda engine, args: _download(engine, args.name, args.json))
    use = actions.add_parser("use", help="make an installed model (or any .gguf path) the one Quire uses")
    use.add_argument("model", metavar="NAME|PATH")
    use.add_argument("--json", action="store_true")
    use.set_defaults(handler=lambda engine, args: _use(engine, args.model, args.json))
    remove = actions.add_parser("remove", help="delete an installed catalog model")
    remove.add_argument("name", metavar="NAME")
    remove.set_defaults(handler=lambda engine, args: _remove(engine, args.name))

    hardware = commands.add_parser("hardware", help="RAM, CPU, GPU, and the model and settings recommended for them")
    hardware.add_argument("--json", action="store_true")
    hardware.set_defaults(handler=lambda engine, args: _hardware(engine, args.json))


def _list(engine: Engine, as_json: bool) -> int:
    installed = engine.installed_models()
    catalog = engine.model_catalog()
    installed_names = {model.name for model in installed}
    in_use = engine.model_file()
    if as_json:
        print(json.dumps({
            "installed": [model.to_dict() for model in installed],
            "available": [{"name": entry.name, "kind": entry.kind, "title": entry.title, "repo": entry.repo,
                           "file": entry.file, "files": list(entry.files), "license": entry.license,
                           "size_bytes": entry.size_bytes, "approx_size_bytes": entry.size_estimate,
                           "sha256": entry.sha256, "verified_by": entry.verified_by,
                           "downloadable": entry.can_download, "bundled": entry.bundled,
                           "installed": entry.name in installed_names, "url": entry.page_url}
                          for entry in catalog],
            "generation_model": engine.settings.generation.model or None,
            "language_model_in_use": str(in_use.path) if in_use.path else None,
            "language_model_bundled": in_use.bundled, "language_model_can_write": in_use.can_write,
        }, indent=2))
        return 0
    print(f"Language model in use: {_in_use_line(in_use.path, in_use.bundled, in_use.can_write)}")
    print(f"Installed (in {engine.paths.models}):")
    if not installed:
        print("  none yet. Download one with: quire models download NAME")
    embedder = engine.settings.retrieval.embedder
    used = {p for p in (in_use.path, Path(embedder).expanduser() if embedder else None) if p is not None}
    for model in installed:
        marker = "*" if Path(model.path) in used else " "
        print(f" {marker}{model.name:<26} {model.kind:<9} {human_size(model.size_bytes):>9}  {model.verified_by}")
    print("\nAvailable from the catalog (downloaded only when you ask):")
    for entry in catalog:
        state = "installed" if entry.name in installed_names else (
            "bundled" if entry.bundled else ("" if entry.can_download else "not downloadable"))
        size = ("" if not entry.size_estimate else
                ("" if entry.size_bytes else "~") + human_size(entry.size_estimate))
        print(f"  {entry.name:<26} {entry.kind:<9} {size:>10}  {entry.license[:28]:<28} {state}")
    return 0


def _in_use_line(path: Path | None, bundled: bool, can_write: bool) -> str:
    if path is None:
        return "none (the bundled SmolLM2 is not installed): answers show the evidence digest"
    where = "the bundled one" if bundled else "generation.model"
    ability = "writes answers" if can_write else "too small to write: answers show the evidence digest"
    return f"{path.name} ({where}; {ability})\n  at {path}"


def _download(engine: Engine, name: str, as_json: bool) -> int:
    bar = DownloadBar(quiet=as_json)
    cancel = CancelToken()
    try:
        model = engine.download_model(name, progress=bar, cancel=cancel)
    except KeyboardInterrupt:
        cancel.cancel()
        bar.clear()
        print("quire: download interrupted; run the same command again to resume.", file=sys.stderr)
        return 130
    finally:
        bar.clear()
    if as_json:
        print(json.dumps(model.to_dict(), indent=2))
    else:
        print(f"installed {model.name} ({human_size(model.size_bytes)}, verified by {model.verified_by})\n"
              f"  at {model.path}\nUse it with: quire models use {model.name}")
    return 0


def _use(engine: Engine, model: str, as_json: bool) -> int:
    choice = engine.use_model(model)
    if as_json:
        print(json.dumps(choice.to_dict(), indent=2))
    else:
        print(f"{choice.setting_name} = {choice.model.path}")
    if choice.warning:
        print(f"warning: {choice.warning}", file=sys.stderr)
    return 0


def _remove(engine: Engine, name: str) -> int:
    from engine.manager.installed import remove_model

    removed = remove_model(name, engine.paths.models)
    print(f"removed {removed.name} ({human_size(removed.size_bytes)} freed)")
    return 0


def _hardware(engine: Engine, as_json: bool) -> int:
    report = engine.hardware_report()
    if as_json:
        print(json.dumps(report, indent=2))
        return 0
    hardware, recommendation = report["hardware"], report["recommendation"]
    print(f"CPU      {hardware['cpu_model'] or 'unknown'}: {hardware['physical_cores']} cores "
          f"({hardware['logical_cores']} threads); {', '.join(hardware['cpu_features']) or 'no SIMD features found'}")
    print(f"RAM      {human_size(hardware['ram_total_bytes'])} total, "
          f"{human_size(hardware['ram_available_bytes'])} free")
    print(f"GPU      {_gpu_line(hardware)}")
    print(f"\nRecommended: {recommendation['title']}, context {recommendation['context_size']:,} tokens, "
          f"n_gpu_layers {recommendation['gpu_layers']}, {recommendation['threads']} threads")
    for reason in recommendation["reasons"]:
        print(f"  - {reason}")
    fit = report["configured_fit"]
    if report.get("configured_problem"):
        print(f"warning: {report['configured_problem']}", file=sys.stderr)
    if fit is not None:
        verdict = "fits" if fit["fits"] else "DOES NOT FIT"
        print(f"\nConfigured model {report['configured_model']}: {verdict} "
              f"(needs ~{human_size(fit['estimate']['total_bytes'])} of {human_size(fit['available_bytes'])} "
              f"{fit['where']} free)")
        if fit["warning"]:
            print(f"warning: {fit['warning']}", file=sys.stderr)
    return 0


def _gpu_line(hardware: dict[str, Any]) -> str:
    offload = hardware["gpu_offload"]
    backend = ("llama.cpp offloads to a GPU" if offload else
               "llama.cpp is a CPU-only build" if offload is False else "llama.cpp not available")
    gpus = "; ".join(f"{gpu['name']} ({human_size(gpu['vram_free_bytes'])} of {human_size(gpu['vram_total_bytes'])} "
                     f"free, {gpu['source']})" for gpu in hardware["gpus"])
    return f"{gpus or 'none found'}; {backend}"
