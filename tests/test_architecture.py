"""The shape of the program, enforced: a Qt-free engine, one door from the UI into it, clean code.

These mirror the import-linter contract in pyproject.toml, so the rules hold even where
import-linter is not installed.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
QT_MODULES = ("PySide6", "PyQt5", "PyQt6", "PySide2", "shiboken6", "shiboken2", "sip")
APP_PACKAGES = ("ui", "desktop")
# UI modules may share the engine's vocabulary (its types, the request a question is asked with, errors,
# progress reports, what a citation marker is, the Qt-free wording of answers and references the
# exports use too, and the named settings presets, which are bundled files); only the adapter may hold
# the engine itself. Not engine.importer: it loads PyMuPDF and a process pool.
# Values and pure functions over them (no engine work): a quire:// link is parsed where it arrives.
UI_MAY_IMPORT = ("engine.types", "engine.bibliography", "engine.table_types", "engine.request", "engine.progress",
                 "engine.errors", "engine.cite.markers", "engine.render", "engine.presets", "engine.links")
# The engine client and the modules it is split into (its worker thread, the work it runs there, its
# model and settings requests).
UI_ADAPTER = (ROOT / "ui" / "engine_client.py", ROOT / "ui" / "engine_worker.py", ROOT / "ui" / "engine_tasks.py",
              ROOT / "ui" / "engine_model_requests.py")
LINTED = ("engine", "ui", "desktop", "tests", "benchmarks")


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) for each import in a file; relative imports stay inside the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
            for alias in node.names:  # `from engine import service` imports engine.service
                yield node.lineno, f"{node.module}.{alias.name}"


def is_within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def test_engine_never_imports_qt_or_the_app() -> None:
    files = python_files("engine")
    assert files, "engine/ has no Python files: the scan would prove nothing"
    offences = [f"{path.relative_to(ROOT)}:{line}: imports {module}"
                for path in files for line, module in imported_modules(path)
                if is_within(module, QT_MODULES + APP_PACKAGES)]
    assert not offences, "engine/ must stay Qt-free and UI-free:\n" + "\n".join(offences)


def test_the_ui_reaches_the_engine_only_through_the_engine_client() -> None:
    offences = [f"{path.relative_to(ROOT)}:{line}: imports {module}"
                for path in python_files("ui") if path not in UI_ADAPTER
                for line, module in imported_modules(path)
                if is_within(module, ("engine",)) and module != "engine" and not is_within(module, UI_MAY_IMPORT)]
    assert not offences, ("only ui/engine_client.py (and its worker modules) may call into the engine:\n" +
                          "\n".join(offences))


def test_importing_the_engine_and_cli_loads_no_qt() -> None:
    code = ("import engine.service, engine.cli.main; import sys; "
            "loaded = sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))); "
            "assert not loaded, loaded")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr


def test_reading_pdfs_loads_no_layout_model() -> None:
    """PyMuPDF 2 would load its pymupdf-layout ONNX models at import; Quire never calls them."""
    code = ("import engine.ingest.pipeline, pymupdf, sys, fitz; "
            "assert pymupdf._get_layout is None and 'pymupdf.layout.onnx' not in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr


def test_ruff_is_clean() -> None:
    targets = [name for name in LINTED if (ROOT / name).is_dir()]
    try:
        done = subprocess.run([sys.executable, "-m", "ruff", "check", *targets], capture_output=True, text=True,
                              cwd=ROOT, timeout=120)
    except FileNotFoundError:  # pragma: no cover - sys.executable always exists
        pytest.skip("no Python to run ruff with")
    if "No module named ruff" in done.stderr:
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_engine_module_has_a_layer() -> None:
    """The layers contract constrains only the modules it names: a new package must be placed in it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    placed = {name.strip() for layer in layers for name in layer.replace(":", "|").split("|")}
    children = {f"engine.{p.stem}" for p in (ROOT / "engine").glob("*.py") if p.stem != "__init__"}
    children |= {f"engine.{p.parent.name}" for p in (ROOT / "engine").glob("*/__init__.py")}
    assert children - placed == set(), "engine modules missing from the layers contract in pyproject.toml"
    assert placed - children == set(), "the layers contract names modules that do not exist"


def test_ui_modules_use_typed_engine_client_methods() -> None:
    """No ``client.call(lambda engine: ...)`` outside the adapter (it would reach into the engine from
    any widget), and no client typed ``Any`` (mypy could not check what is called on it)."""
    offences = []
    for path in python_files("ui"):
        if path in UI_ADAPTER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "call"
                    and "client" in ast.unparse(node.func.value)):
                offences.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node.func)}(...)")
            if (isinstance(node, ast.arg) and "client" in node.arg and node.annotation is not None
                    and ast.unparse(node.annotation) == "Any"):
                offences.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.arg}: Any")
    assert not offences, "call the EngineClient's typed methods instead:\n" + "\n".join(offences)


def attribute_reads(packages: tuple[str, ...], skip: tuple[Path, ...]) -> set[tuple[str, str]]:
    """(owner, attribute) for each ``owner.attribute`` or ``x.owner.attribute`` read in the packages' modules."""
    reads: set[tuple[str, str]] = set()
    for package in packages:
        for path in python_files(package):
            if path in skip:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                    owner = node.value
                    if isinstance(owner, ast.Attribute):
                        reads.add((owner.attr, node.attr))
                    elif isinstance(owner, ast.Name):
                        reads.add((owner.id, node.attr))
    return reads


def test_every_setting_and_tuned_value_is_read_somewhere() -> None:
    """A setting nobody reads misleads its user; a tuned value nobody reads misleads the benchmark that sets it.

    A setting counts as read where a module reads ``<section>.<key>`` (``settings.retrieval.top_n``,
    or a local named after its section, ``generation.model``); a tuned value where it reads
    ``RETRIEVAL.<name>`` (``SYNTHESIS.``, ``CITATION.``)."""
    from dataclasses import fields

    from engine import tuning
    from engine.config import SECTIONS

    reads = attribute_reads(("engine", "ui", "desktop"),
                            skip=(ROOT / "engine" / "config.py", ROOT / "engine" / "tuning.py"))
    unread = [f"settings [{section}] {f.name}" for section, section_type in SECTIONS.items()
              for f in fields(section_type) if (section, f.name) not in reads]
    unread += [f"tuning {group}.{f.name}" for group in ("RETRIEVAL", "SYNTHESIS", "CITATION")
               for f in fields(getattr(tuning, group)) if (group, f.name) not in reads]
    assert not unread, "read by nothing in engine/, ui/ or desktop/ (wire them or delete them):\n" + "\n".join(unread)


ARCHITECTURE_DOC = ROOT / "docs" / "architecture.md"
_DOC_PATH = re.compile(r"\b(?:engine|ui|desktop|benchmarks|scripts|resources|tests|docs)/[\w./-]*[\w/]")
_DOC_MODULE = re.compile(r"\bengine(?:\.\w+)+")
# A file named from inside engine/ in the picture ("retrieve/retriever.py").
_DOC_SHORT_PATH = re.compile(r"(?<![\w/.])[a-z_]+/\w+\.py\b")


def module_exists(dotted: str) -> bool:
    """Whether ``dotted`` names an engine module or package, or something defined in one (engine.x.y.Name)."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:end])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            # A module below engine, and at most one name (a class, a function, a constant) after it.
            return end >= 2 and end >= len(parts) - 1
    return False


def test_the_architecture_doc_names_only_paths_and_modules_that_exist() -> None:
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    paths = set(_DOC_PATH.findall(text))
    modules = set(_DOC_MODULE.findall(text))
    assert len(paths) > 20 and modules, "the scan found too little to prove anything"
    missing = sorted(p for p in paths if not (ROOT / p.rstrip(".")).exists())
    missing += sorted(p for p in set(_DOC_SHORT_PATH.findall(text))
                      if not (ROOT / p).exists() and not (ROOT / "engine" / p).exists())
    missing += sorted(m for m in modules if not module_exists(m))
    assert not missing, f"docs/architecture.md names what is not there: {missing}"


def test_only_the_datastore_store_writes_sql_for_a_datastore_database() -> None:
    """A datastore's tables are read and written by engine/datastore/store.py alone (contents.py checks an
    untrusted pack's file before install; the server datastore speaks PostgreSQL in its own package)."""
    allowed = {"store.py", "contents.py"}
    sql = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\b[^\n]*\b(FROM|INTO|SET)\b")
    offenders = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "engine" / "datastore").glob("*.py"))
                 if path.name not in allowed and sql.search(path.read_text(encoding="utf-8"))]
    offenders += [str(path.relative_to(ROOT)) for path in [ROOT / "engine" / "retrieve" / "postings.py"]
                  if "sqlite3.connect(" in path.read_text(encoding="utf-8")]
    assert not offenders, f"datastore SQL outside engine/datastore/store.py: {offenders}"


def test_the_architecture_picture_lists_the_layers_of_the_import_contract() -> None:
    """Every layer of pyproject's layer contract is a row of the picture, in the same order."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in contracts["contracts"] if c["name"] == "The engine's layers")["layers"]
    rows = [" | ".join(name.strip().removeprefix("engine.") for name in layer.split("|")) for layer in layers]
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    opening = text.index("```", text.index("## The picture"))
    picture = text[opening:text.index("```", opening + 3)]
    lines = [line.strip() for line in picture.splitlines()]
    found = [next((i for i, line in enumerate(lines) if line == row or line.startswith(row + " ")), -1)
             for row in rows]
    missing = [row for row, index in zip(rows, found, strict=True) if index == -1]
    assert not missing, f"layers missing from the picture: {missing}"
    assert found == sorted(found), "the picture's layers are not in the contract's order"
    named = [name.strip() for layer in layers for name in layer.split("|")]
    assert all(module_exists(name) for name in named), [name for name in named if not module_exists(name)]


def test_the_settings_reference_is_generated_from_the_current_settings() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "settings_reference.py"), "--check"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    reference = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    from engine.config import SECTIONS

    for section in SECTIONS:
        assert f"## [{section}]" in reference


def test_the_architecture_doc_lists_every_engine_module_once() -> None:
    """The module table of docs/architecture.md names each package and module directly under engine/."""
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    table = text[text.index("## The engine's modules"):]
    listed = re.findall(r"^\| `(\w+)` \|", table, flags=re.MULTILINE)
    code = sorted(path.stem for path in (ROOT / "engine").glob("*.py") if path.stem != "__init__")
    code += sorted(path.name for path in (ROOT / "engine").iterdir() if (path / "__init__.py").is_file())
    assert len(listed) == len(set(listed)), f"listed twice: {sorted({m for m in listed if listed.count(m) > 1})}"
    assert not set(code) - set(listed), f"missing from docs/architecture.md: {sorted(set(code) - set(listed))}"
    assert not set(listed) - set(code), f"listed but not in engine/: {sorted(set(listed) - set(code))}"


def import_graph(packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Which of ``packages``' modules each of their modules imports (typing-only imports included).

    An edge to a module's own package is left out: ``from engine.ingest import names`` names the
    package only to reach its submodule, and a package always runs before its modules anyway.
    """
    modules = {".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
               for package in packages for path in python_files(package)}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        graph[module] = {name for _, name in imported_modules(path)
                         if name in modules and name != module and not module.startswith(name + ".")}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each import circle once, as the modules around it (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_import_circles_are_found() -> None:
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_app_or_the_engine_is_in_an_import_circle() -> None:
    """Not even through an import made for typing only: a circle makes both modules one unit to read."""
    graph = import_graph(("engine", "ui", "desktop"))
    assert len(graph) > 100, "the scan found too few modules to prove anything"
    circles = import_circles(graph)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(circle) for circle in circles)
