"""Size and start-up of the packaged app: the PyInstaller bundle, the Debian package, and cold starts.

Sizes: the bundle folder (bytes as files, and files), its largest parts, the .deb file and the
size it takes installed (its Installed-Size field, in KiB as dpkg counts). Start-up, each a fresh
process in an empty environment (``env -i``, a fresh HOME, offscreen Qt, no network when
``unshare`` allows it), as a user's first start would be:

- ``quire --help``: the frozen interpreter and the CLI's imports, to the printed help;
- ``quire-desktop --self-test``: to the window listing the four demo papers, ingested and
  embedded; its own report of the seconds from building the window to the listed papers is
  subtracted to give the start-up before the window is built (interpreter, imports, Qt);
- ``quire demo`` (once): the bundled papers ingested and the demo question answered, as
  ``make demo`` does in the development install.

Runs are interleaved over ``--rounds`` rounds; medians and bests are reported with the load
average, since the development machine is shared. With ``--installed`` the installed package
(/opt/quire) is measured instead of dist/quire-desktop.

With ``--baseline`` another bundle (say an older commit's build) is timed in the same rounds,
interleaved, and its demo answer compared with this one's.

    python benchmarks/package_size.py [--rounds 3] [--installed] [--baseline OTHER_BUNDLE]
        [--json benchmarks/results/package_size.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from common import summary

REPO = Path(__file__).resolve().parents[1]
TARGET_INSTALLED_MB = 500


def tree_size(folder: Path) -> tuple[int, int]:
    """Bytes (sum of file sizes, links not followed) and number of files under ``folder``."""
    sizes = [p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink()]
    return sum(sizes), len(sizes)


def largest_parts(bundle: Path, count: int = 12) -> dict[str, float]:
    """MB of the largest top-level entries of the bundle's ``_internal`` folder."""
    internal = bundle / "_internal"
    parts = {}
    for entry in internal.iterdir():
        if entry.is_symlink():
            continue
        parts[entry.name] = tree_size(entry)[0] if entry.is_dir() else entry.stat().st_size
    biggest = sorted(parts.items(), key=lambda item: -item[1])[:count]
    return {name: round(size / 1e6, 1) for name, size in biggest}


def deb_fields(deb: Path) -> dict[str, str]:
    shown = subprocess.run(["dpkg-deb", "--field", str(deb), "Installed-Size", "Depends"], capture_output=True,
                           text=True, check=True).stdout
    return dict(re.findall(r"^([A-Za-z-]+): (.*)$", shown, flags=re.MULTILINE))


def offline_prefix() -> list[str]:
    """``unshare --net`` (or ``-rn`` unprivileged) where it works here, else nothing."""
    for prefix in (["unshare", "--net"], ["unshare", "-rn"]):
        if shutil.which("unshare") and subprocess.run([*prefix, "true"], capture_output=True,
                                                      check=False).returncode == 0:
            return prefix
    return []


def run_fresh(command: list[str], offline: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    """``command`` in an empty environment with a fresh HOME; its wall time."""
    with tempfile.TemporaryDirectory(prefix="quire-package-home-") as home:
        env = {"HOME": home, "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8"}
        started = time.perf_counter()
        done = subprocess.run([*offline, *command], capture_output=True, text=True, env=env, cwd=home,
                              timeout=1800, check=False)
        elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return elapsed, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--installed", action="store_true", help="measure /opt/quire, the installed package")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--baseline", type=Path,
                        help="another bundle (an older build's dist/quire-desktop) timed in the same rounds")
    args = parser.parse_args()

    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    deb = REPO / "dist" / f"quire_{version}_{arch}.deb"
    bundle = Path("/opt/quire") if args.installed else REPO / "dist" / "quire-desktop"
    if not (bundle / "quire-desktop").is_file() or not deb.is_file():
        raise SystemExit(f"build first: make package (wants {bundle}/quire-desktop and {deb})")
    bundle_bytes, bundle_files = tree_size(bundle)
    fields = deb_fields(deb)
    installed_kib = int(fields["Installed-Size"])

    offline = offline_prefix()
    load_before = os.getloadavg()
    # With --baseline, the other bundle's runs are interleaved with these, round by round and in
    # alternating order, so that both see the same load on a shared machine.
    measured = {"this": bundle, **({"baseline": args.baseline} if args.baseline else {})}
    timings: dict[str, dict[str, list[float]]] = {name: {"cli": [], "self_test": [], "before_window": [], "demo": []}
                                                  for name in measured}
    demo_outputs: dict[str, str] = {}
    for round_number in range(args.rounds):
        order = list(measured.items()) if round_number % 2 == 0 else list(measured.items())[::-1]
        for name, measured_bundle in order:
            times = timings[name]
            times["cli"].append(run_fresh([str(measured_bundle / "quire"), "--help"], offline)[0])
            elapsed, done = run_fresh([str(measured_bundle / "quire-desktop"), "--self-test"], offline)
            reported = float(re.search(r"self-test passed: .* in ([\d.]+) s", done.stdout).group(1))  # type: ignore[union-attr]
            times["self_test"].append(elapsed)
            times["before_window"].append(elapsed - reported)
            if round_number == args.rounds - 1:
                demo_s, demo = run_fresh([str(measured_bundle / "quire"), "demo"], offline)
                times["demo"].append(demo_s)
                demo_outputs[name] = demo.stdout
    cli, self_test, before_window = (timings["this"][key] for key in ("cli", "self_test", "before_window"))
    demo_s = timings["this"]["demo"][0]
    answered = "\nReferences\n" in demo_outputs["this"]
    load_after = os.getloadavg()

    results: dict[str, Any] = {
        "version": version,
        "measured": "installed package (/opt/quire)" if args.installed else "dist/quire-desktop (the bundle)",
        "bundle": {"bytes": bundle_bytes, "mb": round(bundle_bytes / 1e6, 1), "files": bundle_files,
                   "largest_parts_mb": largest_parts(bundle)},
        "deb": {"file": deb.name, "bytes": deb.stat().st_size, "mb": round(deb.stat().st_size / 1e6, 1),
                "installed_size_kib": installed_kib, "installed_mb": round(installed_kib * 1024 / 1e6, 1),
                "depends": fields.get("Depends", "")},
        "target_installed_mb": TARGET_INSTALLED_MB,
        "meets_target": installed_kib * 1024 / 1e6 < TARGET_INSTALLED_MB,
        "offline": bool(offline),
        "cli_help_cold": summary(cli, 2),
        "desktop_self_test": summary(self_test, 2),
        "desktop_start_before_window": summary(before_window, 2),
        "demo_ingest_and_answer_s": round(demo_s, 1),
        "demo_answered_with_references": answered,
        **({"baseline": {"bundle": str(args.baseline), "bytes": tree_size(args.baseline)[0],
                         "cli_help_cold": summary(timings["baseline"]["cli"], 2),
                         "desktop_self_test": summary(timings["baseline"]["self_test"], 2),
                         "desktop_start_before_window": summary(timings["baseline"]["before_window"], 2),
                         "demo_ingest_and_answer_s": round(timings["baseline"]["demo"][0], 1),
                         "demo_answer_identical": demo_outputs["baseline"].split("\nReferences\n")[0]
                         == demo_outputs["this"].split("\nReferences\n")[0]}}
           if args.baseline else {}),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "command": "python benchmarks/package_size.py" + (" --installed" if args.installed else "")
                   + (" --baseline BUNDLE" if args.baseline else "") + " --json benchmarks/results/package_size.json",
    }
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    if not answered:
        print("the packaged app did not answer the demo question:\n" + demo.stdout[-2000:], file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
