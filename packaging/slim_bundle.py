"""Make the PyInstaller bundle smaller without changing what the app does.

Run by packaging/build_linux.sh on ``dist/quire-desktop`` after PyInstaller and before the
self-test, so the bundle that is tested is the one that is packaged:

- **ICU data**: Qt's ``libicudata`` cut to what Qt uses, 20 MB less (packaging/icu_data.py).
- **one BLAS**: FAISS runs on numpy's OpenBLAS instead of its own second copy, 41 MB less
  (packaging/faiss_blas.py, checked against numpy before it is put in place).

- **strip**: the symbol tables and debug sections of every shared library and extension module
  (``strip --strip-unneeded``, what Debian's ``dh_strip`` does), 34 MB, half of it
  ``libpython3.11`` as pyenv builds it. Some wheels' libraries were rewritten by auditwheel
  (patchelf) so that a stripped copy no longer loads ("ELF load command address/offset not
  page-aligned", numpy's OpenBLAS): each stripped copy is checked for that and the original kept
  where it fails.
- **search paths of the build machine**: Python's extension modules, as pyenv builds them, carry
  a ``RUNPATH`` into the build machine's interpreter (``/root/.pyenv/versions/3.11.7/lib``),
  which means nothing on a user's machine (the bundle's libpython is found beside them). Removed
  with ``chrpath``, which edits the dynamic section in place; ``$ORIGIN`` paths, which the
  wheels' libraries find each other by, stay.
- **link duplicates**: files with the same bytes (a library wheels ship under its link name and
  its soname, as llama.cpp's do) become relative symbolic links to one copy.

The bootloader ``quire-desktop`` is never touched: its Python archive is appended to the ELF file,
and strip would cut it off.

Usage: ``python packaging/slim_bundle.py dist/quire-desktop``
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faiss_blas import replace_faiss_blas  # packaging/faiss_blas.py, beside this script
from icu_data import cut_icu_data  # packaging/icu_data.py

ELF_MAGIC = b"\x7fELF"
PAGE = 4096
STRIP = ["strip", "--strip-unneeded", "--remove-section=.comment", "--remove-section=.note"]


def is_elf(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == ELF_MAGIC


def loadable(path: Path) -> bool:
    """Whether every LOAD segment of the ELF file at ``path`` maps at an offset the loader accepts.

    ld.so refuses a segment whose file offset and address differ modulo the page size; that is
    what strip does to a library patchelf rewrote (it moves sections patchelf's segments rely on).
    """
    shown = subprocess.run(["readelf", "--program-headers", "--wide", str(path)], capture_output=True, text=True,
                           check=True).stdout
    for line in shown.splitlines():
        fields = line.split()
        if fields[:1] == ["LOAD"]:
            offset, address = int(fields[1], 16), int(fields[2], 16)
            if (address - offset) % PAGE:
                return False
    return True


def strip_libraries(folder: Path) -> tuple[int, list[Path]]:
    """Strip the shared libraries under ``folder`` (the bundle's _internal, never its bootloader); the bytes
    saved and the files left as they were."""
    saved, kept = 0, []
    with tempfile.TemporaryDirectory(prefix="quire-strip-") as work:
        stripped = Path(work) / "stripped"
        for path in sorted(folder.rglob("*")):
            if path.is_symlink() or not path.is_file() or not is_elf(path):
                continue
            done = subprocess.run([*STRIP, "-o", str(stripped), str(path)], capture_output=True, text=True,
                                  check=False)
            if done.returncode != 0 or not loadable(stripped):
                kept.append(path)
                continue
            before, after = path.stat().st_size, stripped.stat().st_size
            if after < before:
                shutil.copymode(path, stripped)
                os.replace(stripped, path)
                saved += before - after
    return saved, kept


def _search_path(path: Path) -> str | None:
    shown = subprocess.run(["readelf", "--dynamic", str(path)], capture_output=True, text=True, check=True).stdout
    for line in shown.splitlines():
        if "(RPATH)" in line or "(RUNPATH)" in line:
            return line.split("[", 1)[1].rstrip("]")
    return None


def drop_build_machine_paths(folder: Path) -> list[Path]:
    """Remove from each library under ``folder`` the search-path entries outside the bundle; the files changed."""
    changed = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file() or not is_elf(path):
            continue
        search_path = _search_path(path)
        if search_path is None:
            continue
        inside = ":".join(part for part in search_path.split(":") if part.startswith(("$ORIGIN", "${ORIGIN}")))
        if inside == search_path:
            continue
        command = ["chrpath", "--replace", inside, str(path)] if inside else ["chrpath", "--delete", str(path)]
        subprocess.run(command, capture_output=True, text=True, check=True)
        changed.append(path)
    return changed


def link_duplicates(bundle: Path, *, min_size: int = 64 * 1024) -> int:
    """Replace files of at least ``min_size`` bytes with the same contents by relative links to one of them;
    the bytes saved.

    The copy kept is the one with the longest name (``libllama.so.0`` rather than ``libllama.so``,
    as a library's links usually go), then the first in path order. Small files (licences and
    metadata that packages happen to share) stay each package's own.
    """
    by_size: dict[int, list[Path]] = defaultdict(list)
    for path in bundle.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.stat().st_size >= max(1, min_size):
            by_size[path.stat().st_size].append(path)
    saved = 0
    for size, paths in by_size.items():
        if len(paths) < 2:
            continue
        by_digest: dict[str, list[Path]] = defaultdict(list)
        for path in paths:
            by_digest[hashlib.sha256(path.read_bytes()).hexdigest()].append(path)
        for same in by_digest.values():
            if len(same) < 2:
                continue
            original, *copies = sorted(same, key=lambda p: (-len(p.name), str(p)))
            for copy in copies:
                copy.unlink()
                copy.symlink_to(os.path.relpath(original, copy.parent))
                saved += size
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path, help="the PyInstaller one-folder bundle (dist/quire-desktop)")
    args = parser.parse_args(argv)
    if not (args.bundle / "_internal").is_dir():
        print(f"error: {args.bundle} is not a PyInstaller bundle (no _internal/)", file=sys.stderr)
        return 2
    missing = [tool for tool in ("strip", "readelf", "nm", "as", "ld", "cc", "chrpath") if shutil.which(tool) is None]
    if missing:
        print(f"error: {', '.join(missing)} missing; install them with: sudo apt-get install binutils gcc chrpath",
              file=sys.stderr)
        return 2
    internal = args.bundle / "_internal"
    for icu_library in sorted(internal.glob("PySide6/Qt/lib/libicudata.so.*")):
        print(f"slim_bundle: cut Qt's ICU data to what Qt uses, {cut_icu_data(icu_library) / 1e6:.1f} MB less")
    print(f"slim_bundle: FAISS on numpy's OpenBLAS, {replace_faiss_blas(internal) / 1e6:.1f} MB less")
    stripped, kept = strip_libraries(internal)
    print(f"slim_bundle: stripped the libraries, {stripped / 1e6:.1f} MB less; left unstripped (strip would "
          f"make them unloadable): {', '.join(p.name for p in kept) or 'none'}")
    rewritten = drop_build_machine_paths(internal)
    print(f"slim_bundle: removed the build machine's library search paths from {len(rewritten)} libraries")
    linked = link_duplicates(internal)
    print(f"slim_bundle: linked identical files to one copy, {linked / 1e6:.1f} MB less")
    return 0


if __name__ == "__main__":
    sys.exit(main())
