"""FAISS on numpy's OpenBLAS: one BLAS in the bundle instead of two (41 MB less).

The faiss-cpu wheel links its own OpenBLAS (``faiss_cpu.libs/libopenblas*.so``, 38 MB, with a
libgfortran and a libquadmath of its own), while numpy brings another (``numpy.libs``, 25 MB) that
is loaded first anyway. FAISS calls 14 BLAS/LAPACK routines. ``packaging/faiss_blas.c`` defines
them by forwarding to numpy's OpenBLAS (64-bit integers, ``scipy_`` names); it is compiled into a
library under the file name and soname FAISS links to, which replaces the wheel's copy.

Two checks guard it, both at build time: every symbol FAISS takes from its OpenBLAS must be defined
by the replacement (:func:`missing_symbols`), and FAISS run on the replacement must give what numpy
computes (:func:`check`: k-means, exact search in batches, an IVF-SQ8 index as the library builds
one, PCA, all of which go through BLAS or LAPACK).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("faiss_blas.c")


def _symbols(library: Path, *, defined: bool) -> set[str]:
    listed = subprocess.run(["nm", "--dynamic", "--defined-only" if defined else "--undefined-only", str(library)],
                            capture_output=True, text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in listed.splitlines() if line.strip()}


def _needed(library: Path) -> list[str]:
    shown = subprocess.run(["readelf", "--dynamic", str(library)], capture_output=True, text=True, check=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in shown.splitlines() if "(NEEDED)" in line]


def _soname(library: Path) -> str:
    shown = subprocess.run(["readelf", "--dynamic", str(library)], capture_output=True, text=True, check=True).stdout
    for line in shown.splitlines():
        if "(SONAME)" in line:
            return line.split("[", 1)[1].rstrip("]")
    return library.name


def locate(site: Path) -> tuple[Path, Path, list[Path]]:
    """Under ``site`` (the bundle's _internal, or site-packages): FAISS' OpenBLAS, numpy's, and FAISS' libraries."""
    faiss_libraries = sorted((site / "faiss").glob("*.so"))
    wheel_blas = [site / "faiss_cpu.libs" / name for library in faiss_libraries for name in _needed(library)
                  if name.startswith("libopenblas")]
    numpy_blas = sorted((site / "numpy.libs").glob("libscipy_openblas64_*.so"))
    if not faiss_libraries or not wheel_blas or len(numpy_blas) != 1:
        raise ValueError(f"no FAISS linked to its own OpenBLAS beside numpy's scipy-openblas64 under {site}")
    return wheel_blas[0], numpy_blas[0], faiss_libraries


def missing_symbols(faiss_libraries: list[Path], wheel_blas: Path, replacement: Path) -> set[str]:
    """The symbols FAISS takes from its OpenBLAS that ``replacement`` does not define."""
    wanted = set().union(*(_symbols(library, defined=False) for library in faiss_libraries))
    return (wanted & _symbols(wheel_blas, defined=True)) - _symbols(replacement, defined=True)


def build(wheel_blas: Path, numpy_blas: Path, target: Path) -> None:
    """Compile faiss_blas.c into ``target``, named as ``wheel_blas`` and finding numpy's OpenBLAS beside numpy."""
    relative = os.path.relpath(numpy_blas.parent, wheel_blas.parent)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-Wall", "-Werror", "-o", str(target), str(SOURCE),
                    f"-Wl,-soname,{_soname(wheel_blas)}", f"-L{numpy_blas.parent}", f"-l:{numpy_blas.name}",
                    f"-Wl,-rpath,$ORIGIN/{relative}", "-Wl,-z,noexecstack", "-Wl,--as-needed"], check=True)


_CHECK = r"""
import sys
import numpy as np
import faiss

maps = open("/proc/self/maps").read()
assert sys.argv[1] in maps and "libopenblaso" not in maps.replace(sys.argv[1], ""), "not the replacement BLAS"
rng = np.random.default_rng(0)
base = rng.standard_normal((4000, 64)).astype("float32")
queries = rng.standard_normal((300, 64)).astype("float32")
# Exact search in a batch (above FAISS' BLAS threshold of 20 queries): the same neighbours as numpy.
flat = faiss.IndexFlatIP(64)
flat.add(base)
_, found = flat.search(queries, 5)
expected = np.argsort(-(queries @ base.T), axis=1)[:, :5]
assert (found == expected).mean() > 0.999, (found == expected).mean()
# k-means: each point's centroid is its nearest one.
kmeans = faiss.Kmeans(64, 32, niter=10, seed=1)
kmeans.train(base)
_, assigned = kmeans.index.search(base, 1)
nearest = np.argmin(((base[:, None, :] - kmeans.centroids[None]) ** 2).sum(-1), axis=1)
assert (assigned[:, 0] == nearest).mean() > 0.999
# IVF-SQ8 as engine.index builds a large library's index: good recall against exact search.
ivf = faiss.index_factory(64, "IVF32,SQ8", faiss.METRIC_INNER_PRODUCT)
ivf.train(base)
ivf.add(base)
ivf.nprobe = 32
_, approximate = ivf.search(queries, 1)
assert (approximate[:, 0] == expected[:, 0]).mean() > 0.9
# PCA (LAPACK): the variances of the projection are the covariance's top eigenvalues.
pca = faiss.PCAMatrix(64, 8)
pca.train(base)
projected = pca.apply(base)
top = np.sort(np.linalg.eigvalsh(np.cov(base.T, bias=True)))[::-1][:8]
assert np.allclose(np.sort(projected.var(axis=0))[::-1], top, rtol=1e-3), (projected.var(axis=0), top)
print("faiss_blas: FAISS on numpy's OpenBLAS matches numpy (search, k-means, IVF-SQ8, PCA)")
"""


def check(replacement: Path) -> None:
    """Run FAISS from this interpreter's site-packages with ``replacement`` as its OpenBLAS; raise unless right."""
    import importlib.util

    found = importlib.util.find_spec("faiss")  # the installed package; the check itself runs in a fresh process
    if found is None or found.origin is None:
        raise RuntimeError("faiss is not installed in the interpreter that builds the bundle")
    site = Path(found.origin).resolve().parent.parent
    wheel_blas, numpy_blas, _ = locate(site)
    with tempfile.TemporaryDirectory(prefix="quire-faiss-blas-") as work:
        staged = Path(work)
        shutil.copytree(site / "faiss", staged / "faiss")
        shutil.copytree(site / "faiss_cpu.libs", staged / "faiss_cpu.libs")
        (staged / "numpy.libs").symlink_to(numpy_blas.parent)
        shutil.copy2(replacement, staged / "faiss_cpu.libs" / wheel_blas.name)
        env = {**os.environ, "PYTHONPATH": str(staged)}
        done = subprocess.run([sys.executable, "-c", _CHECK, str(staged / "faiss_cpu.libs" / wheel_blas.name)],
                              capture_output=True, text=True, env=env, timeout=300, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"FAISS on numpy's OpenBLAS is wrong:\n{done.stdout}{done.stderr[-3000:]}")
        print(done.stdout.strip())


def replace_faiss_blas(site: Path) -> int:
    """Put the replacement in place of FAISS' OpenBLAS under ``site`` (the bundle's _internal); bytes saved."""
    wheel_blas, numpy_blas, faiss_libraries = locate(site)
    with tempfile.TemporaryDirectory(prefix="quire-faiss-blas-") as work:
        replacement = Path(work) / wheel_blas.name
        build(wheel_blas, numpy_blas, replacement)
        missing = missing_symbols(faiss_libraries, wheel_blas, replacement)
        if missing:
            raise RuntimeError(f"packaging/faiss_blas.c lacks {', '.join(sorted(missing))}, which FAISS calls; "
                               "add them")
        check(replacement)
        before = sum(path.stat().st_size for path in wheel_blas.parent.iterdir() if path.is_file())
        shutil.copy2(replacement, wheel_blas)
    # The wheel's libgfortran and libquadmath served only its OpenBLAS: gone with it (and PyInstaller's
    # links to them at the top of the bundle), as is whatever else in its folder nothing loads any more.
    while True:
        remaining = [path for path in wheel_blas.parent.iterdir() if path.is_file()]
        loaded = set().union(*(_needed(library) for library in [*remaining, *faiss_libraries]))
        unused = [path for path in remaining if path.name not in loaded]
        if not unused:
            break
        for path in unused:
            path.unlink()
            if (site / path.name).is_symlink():
                (site / path.name).unlink()
    after = sum(path.stat().st_size for path in wheel_blas.parent.iterdir() if path.is_file())
    return before - after
