"""What makes the bundle smaller (packaging/slim_bundle.py, icu_data.py, faiss_blas.py), on real files.

Each cut must leave the app working as before: a stripped library that still loads, duplicates
that become links, Qt's cut ICU data that still collates and maps case as the full data does,
and FAISS on numpy's OpenBLAS giving numpy's answers.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
needs_binutils = pytest.mark.skipif(any(shutil.which(tool) is None for tool in ("strip", "readelf", "nm", "as", "ld")),
                                    reason="needs binutils (apt-get install binutils)")


def _module(name: str) -> ModuleType:
    if str(PACKAGING) not in sys.path:
        sys.path.insert(0, str(PACKAGING))
    spec = importlib.util.spec_from_file_location(name, PACKAGING / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _site_file(pattern: str) -> Path:
    import numpy

    site = Path(numpy.__file__).resolve().parents[1]
    found = sorted(site.glob(pattern))
    if not found:
        pytest.skip(f"{pattern} is not installed here")
    return found[0]


def test_identical_files_become_links_to_the_one_with_the_longest_name(tmp_path: Path) -> None:
    slim = _module("slim_bundle")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libx.so").write_bytes(b"same bytes")
    (tmp_path / "lib" / "libx.so.0").write_bytes(b"same bytes")
    (tmp_path / "other.txt").write_bytes(b"other bytes")
    (tmp_path / "a-1.0.dist-info").mkdir()
    (tmp_path / "b-2.0.dist-info").mkdir()
    (tmp_path / "a-1.0.dist-info" / "INSTALLER").write_bytes(b"pip\n")
    (tmp_path / "b-2.0.dist-info" / "INSTALLER").write_bytes(b"pip\n")
    assert slim.link_duplicates(tmp_path, min_size=5) == len(b"same bytes")
    assert not any(path.is_symlink() for path in tmp_path.glob("*.dist-info/*"))  # below min_size: left alone
    assert (tmp_path / "lib" / "libx.so").is_symlink()
    assert os.readlink(tmp_path / "lib" / "libx.so") == "libx.so.0"
    assert (tmp_path / "lib" / "libx.so").read_bytes() == b"same bytes"
    assert not (tmp_path / "other.txt").is_symlink()


@needs_binutils
def test_a_library_strip_would_make_unloadable_is_left_as_it_is(tmp_path: Path) -> None:
    # numpy's OpenBLAS was rewritten by auditwheel (patchelf); stripped, ld.so refuses it.
    slim = _module("slim_bundle")
    openblas = _site_file("numpy.libs/libscipy_openblas64_*.so")
    folder = tmp_path / "numpy.libs"
    folder.mkdir()
    copied = folder / openblas.name
    shutil.copy2(openblas, copied)
    extension = _site_file("yaml/_yaml.cpython-*.so")
    shutil.copy2(extension, tmp_path / extension.name)
    before = (tmp_path / extension.name).stat().st_size
    assert slim.loadable(copied)

    saved, kept = slim.strip_libraries(tmp_path)
    assert kept == [copied] and copied.read_bytes() == openblas.read_bytes()
    assert saved > 0 and (tmp_path / extension.name).stat().st_size < before
    assert slim.loadable(tmp_path / extension.name)


@needs_binutils
def test_the_cut_icu_data_collates_and_maps_case_as_the_full_data_does(tmp_path: Path) -> None:
    icu = _module("icu_data")
    full = _site_file("PySide6/Qt/lib/libicudata.so.*")
    cut = tmp_path / full.name
    shutil.copy2(full, cut)
    assert icu.cut_icu_data(cut) > 15_000_000
    probe = (
        "import sys\n"
        "from PySide6.QtCore import QCoreApplication, QCollator, QLocale, QTimeZone\n"
        "app = QCoreApplication([])\n"
        "german = QCollator(QLocale('de_DE'))\n"
        "swedish = QCollator(QLocale('sv_SE'))\n"
        "natural = QCollator(QLocale('en_US'))\n"
        "natural.setNumericMode(True)\n"
        "print(sorted(['Zebra', 'Äpfel', 'apfel', 'Öl', 'Ofen'], key=german.sortKey),"
        " sorted(['å', 'ä', 'z', 'a'], key=swedish.sortKey),"
        " sorted(['file10', 'file9', 'file1'], key=natural.sortKey),"
        " QLocale('tr_TR').toUpper('istanbul'),"
        " QTimeZone(b'Europe/Berlin').displayName(QTimeZone.StandardTime, QTimeZone.LongName, QLocale('de')))\n"
        "print(any(sys.argv[1] in line for line in open('/proc/self/maps')))\n"
    )
    # RUNPATH, not RPATH, points Qt at its ICU: LD_LIBRARY_PATH puts the cut copy first.
    runs = [subprocess.run([sys.executable, "-c", probe, str(library)], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "LD_LIBRARY_PATH": str(library.parent)}, check=False)
            for library in (full, cut)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    (full_result, full_loaded), (cut_result, cut_loaded) = (run.stdout.splitlines() for run in runs)
    assert full_loaded == cut_loaded == "True"
    assert cut_result == full_result
    assert "İSTANBUL" in cut_result and "['a', 'z', 'å', 'ä']" in cut_result


@needs_binutils
@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler (apt-get install gcc)")
def test_faiss_runs_on_numpys_openblas_with_every_routine_it_calls(tmp_path: Path) -> None:
    faiss_blas = _module("faiss_blas")
    site = _site_file("faiss").parent
    wheel_blas, numpy_blas, faiss_libraries = faiss_blas.locate(site)
    replacement = tmp_path / wheel_blas.name
    faiss_blas.build(wheel_blas, numpy_blas, replacement)
    assert faiss_blas.missing_symbols(faiss_libraries, wheel_blas, replacement) == set()
    assert replacement.stat().st_size < wheel_blas.stat().st_size / 100
    faiss_blas.check(replacement)  # raises unless search, k-means, IVF-SQ8 and PCA match numpy


@needs_binutils
@pytest.mark.skipif(shutil.which("chrpath") is None, reason="needs chrpath (apt-get install chrpath)")
def test_search_paths_into_the_build_machine_are_removed_and_origin_paths_kept(tmp_path: Path) -> None:
    import _json

    import yaml._yaml

    slim = _module("slim_bundle")
    for module in (_json, yaml._yaml):
        shutil.copy2(str(module.__file__), tmp_path / Path(str(module.__file__)).name)
    before = {path.name: slim._search_path(path) for path in tmp_path.iterdir()}
    changed = slim.drop_build_machine_paths(tmp_path)
    for path in tmp_path.iterdir():
        after = slim._search_path(path)
        assert after is None or all(part.startswith("$ORIGIN") for part in after.split(":")), after
        assert (path in changed) == (after != before[path.name])
