#!/usr/bin/env bash
# Build the standalone Linux bundle dist/quire-desktop/ with PyInstaller, then prove it starts
# without the development environment: run its --self-test with an empty environment (no venv on
# PATH, no PYTHONPATH, a fresh HOME, no display) and exit with the self-test's status.
#
# Usage: packaging/build_linux.sh            (from anywhere; works in the repository root)
#   PYTHON=/path/to/python  the interpreter whose environment is bundled (default: .venv/bin/python)
#   BUILD_TOOLS=/path       where PyInstaller is installed if the interpreter lacks it (default: build/tools)
#   SKIP_BUILD=1            only run the self-test of an existing dist/quire-desktop/
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
BUILD_TOOLS="${BUILD_TOOLS:-$ROOT/build/tools}"
BUNDLE="$ROOT/dist/quire-desktop"

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    if [[ ! -x "$PYTHON" ]]; then
        echo "error: no Python at $PYTHON; run 'make setup' first or set PYTHON" >&2
        exit 2
    fi
    # A build tool, not a runtime dependency: never listed in pyproject.toml, and installed into a
    # folder of its own (on PYTHONPATH for the build only), so the app's environment stays as it is.
    export PYTHONPATH="$BUILD_TOOLS${PYTHONPATH:+:$PYTHONPATH}"
    if ! "$PYTHON" -c "import PyInstaller" 2>/dev/null; then
        "$PYTHON" -m pip install --quiet --target "$BUILD_TOOLS" "pyinstaller>=6.6,<7"
    fi
    echo "== building $BUNDLE with PyInstaller $("$PYTHON" -m PyInstaller --version)"
    build_start=$SECONDS
    "$PYTHON" -m PyInstaller packaging/quire.spec --noconfirm --clean \
        --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller"
    # The one executable is also the command line when started by the name `quire`
    # (packaging/quire_desktop_entry.py).
    ln -sfn quire-desktop "$BUNDLE/quire"
    # Strip the libraries and link duplicate files to one copy (docs/packaging.md, "Size"); before
    # the self-test, so that the bundle tested is the one packaged.
    "$PYTHON" packaging/slim_bundle.py "$BUNDLE"
    echo "== build took $((SECONDS - build_start)) s"
fi

if [[ ! -x "$BUNDLE/quire-desktop" ]]; then
    echo "error: $BUNDLE/quire-desktop is missing; the build failed" >&2
    exit 2
fi
echo "== bundle size: $(du -sh "$BUNDLE" | cut -f1) ($(du -sb "$BUNDLE" | cut -f1) bytes, $(find "$BUNDLE" -type f | wc -l) files)"

# env -i: nothing from this shell leaks in (no VIRTUAL_ENV, PYTHONPATH, LD_LIBRARY_PATH, HF_HOME,
# proxies); a throw-away HOME so no cached model or user setting can help; offscreen Qt (no display).
self_test_home="$(mktemp -d)"
trap 'rm -rf "$self_test_home"' EXIT
echo "== self-test: $BUNDLE/quire-desktop --self-test (clean environment, HOME=$self_test_home)"
test_start=$(date +%s.%N)
status=0
env -i HOME="$self_test_home" PATH=/usr/bin:/bin QT_QPA_PLATFORM=offscreen \
    "$BUNDLE/quire-desktop" --self-test || status=$?
test_end=$(date +%s.%N)
elapsed=$(awk -v a="$test_start" -v b="$test_end" 'BEGIN { printf "%.1f", b - a }')
if [[ $status -eq 0 ]]; then
    echo "== self-test PASSED in ${elapsed} s (including start-up)"
else
    echo "== self-test FAILED with exit status $status after ${elapsed} s" >&2
fi
exit "$status"
