"""The Debian package: its recipe on every run, and (slow, as root) the package installed for real.

The slow test builds the package with ``make package`` unless ``dist/`` holds one newer than every
file it is made from, installs it with apt, runs the installed commands in a fresh ``HOME`` and
without a network, checks the menu entry, removes and purges the package, and checks that the
user's data folder is still there.
"""

from __future__ import annotations

import configparser
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from desktop.platform_check import XCB_LIBRARIES

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
BUILD_DEB = PACKAGING / "build_deb.sh"
DEBIAN = PACKAGING / "debian"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
# What the package is made from: when none of it is newer than a built .deb, the .deb is reused
# (notes for developers, *.md under packaging/, do not go into it).
SOURCES = ("engine", "ui", "desktop", "resources", "packaging", "pyproject.toml", "NOTICE")


def test_the_deb_script_is_executable_bash_that_packs_with_debian_tools() -> None:
    assert os.access(BUILD_DEB, os.X_OK), "packaging/build_deb.sh must be executable"
    checked = subprocess.run(["bash", "-n", str(BUILD_DEB)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    script = BUILD_DEB.read_text(encoding="utf-8")
    assert "set -euo pipefail" in script
    assert "fakeroot dpkg-deb" in script and "dpkg-shlibdeps" in script
    for target in ("/opt/quire", "/usr/bin/quire-desktop", "/usr/bin/quire", "applications/quire.desktop",
                   "scalable/apps/quire.svg", "doc/quire/copyright"):
        assert target in script, f"build_deb.sh does not install {target}"
    # No maintainer scripts: nothing is run on install, remove or purge that could touch user data.
    assert not any(name in script for name in ("postinst", "prerm", "postrm", "preinst"))


def test_the_package_depends_on_the_xcb_libraries_the_no_display_message_names() -> None:
    script = BUILD_DEB.read_text(encoding="utf-8")
    assert "from desktop.platform_check import XCB_LIBRARIES" in script
    assert 'read -ra xcb_packages <<<"$XCB_DEPENDS"' in script


def test_the_changelog_is_at_the_version_in_pyproject() -> None:
    first = (DEBIAN / "changelog").read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(f"quire ({VERSION}) "), "add a packaging/debian/changelog entry for " + VERSION


def test_the_control_template_names_every_field_the_script_fills() -> None:
    template = (DEBIAN / "control.in").read_text(encoding="utf-8")
    fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", template, flags=re.MULTILINE))
    required = {"Package", "Version", "Architecture", "Maintainer", "Installed-Size", "Depends", "Description"}
    assert required <= set(fields)
    filled = set(re.findall(r"@([A-Z_]+)@", template))
    script = BUILD_DEB.read_text(encoding="utf-8")
    assert all(f"@{name}@" in script for name in filled)


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None,
                    reason="desktop-file-validate is missing (apt-get install desktop-file-utils)")
def test_the_desktop_entry_validates_and_opens_pdfs() -> None:
    entry = PACKAGING / "quire.desktop"
    checked = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0 and not checked.stdout.strip(), checked.stdout + checked.stderr
    text = entry.read_text(encoding="utf-8")
    assert "MimeType=application/pdf;x-scheme-handler/quire;" in text and "Exec=quire-desktop %u" in text
    assert "Icon=quire" in text


@pytest.mark.parametrize("opened", ["quire://open?paper=faa5aceb428cdeb9&page=3&passage=faa5aceb428cdeb9-0012",
                                    "/home/reader/papers/a paper.pdf", "file:///home/reader/papers/a%20paper.pdf"])
def test_what_the_desktop_entry_passes_reaches_the_app_as_a_link_or_a_file(opened: str) -> None:
    """The launcher runs the entry's Exec line with %u replaced by one URL or file: quire-desktop's own
    argument parser must take it as a link to open or a file to add."""
    from desktop.app import build_parser, split_links

    entry = configparser.ConfigParser(interpolation=None)
    entry.read(PACKAGING / "quire.desktop", encoding="utf-8")
    section = entry["Desktop Entry"]
    assert "x-scheme-handler/quire" in section["MimeType"].split(";")
    command = shlex.split(section["Exec"])
    assert command[0] == "quire-desktop" and command.count("%u") == 1
    argv = [opened if part == "%u" else part for part in command[1:]]
    links, paths = split_links(build_parser().parse_args(argv).paths)
    if opened.startswith("quire:"):
        assert (links, paths) == ([opened], [])
    else:
        assert (links, paths) == ([], ["/home/reader/papers/a paper.pdf"])


def test_the_icon_renders_at_every_size(tmp_path: Path, qapp: object) -> None:
    # qapp: the test process's one QApplication, made first. render_icons would otherwise make a
    # QGuiApplication, and every later test that builds a widget in this process would abort.
    import importlib.util

    from PySide6.QtGui import QImage

    spec = importlib.util.spec_from_file_location("render_icons", PACKAGING / "render_icons.py")
    assert spec is not None and spec.loader is not None
    render_icons = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(render_icons)
    written = render_icons.render_icons(tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in written] == \
        [f"{n}x{n}/apps/quire.png" for n in render_icons.SIZES]
    for path, size in zip(written, render_icons.SIZES, strict=True):
        image = QImage(str(path))
        assert (image.width(), image.height()) == (size, size)
        # Drawn, not blank: the tile's centre is opaque and the corner (outside the rounded tile) clear.
        assert image.pixelColor(size // 2, size // 2).alpha() == 255
        assert image.pixelColor(0, 0).alpha() == 0


# --- the package installed for real ------------------------------------------------------------------

def _newest_source_mtime() -> float:
    newest = 0.0
    for name in SOURCES:
        path = ROOT / name
        files = [path] if path.is_file() else \
            [p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts
             and not (name == "packaging" and p.suffix == ".md")]
        newest = max([newest, *(p.stat().st_mtime for p in files)])
    return newest


def _built_package() -> Path:
    """dist/quire_VERSION_ARCH.deb, built with ``make package`` unless one newer than its sources is there."""
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    deb = ROOT / "dist" / f"quire_{VERSION}_{arch}.deb"
    if not deb.is_file() or deb.stat().st_mtime < _newest_source_mtime():
        built = subprocess.run(["make", "package"], cwd=ROOT, capture_output=True, text=True, timeout=3600,
                               check=False)
        assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    assert deb.is_file()
    return deb


def _listing(home: Path) -> dict[str, int]:
    """Every file under ``home`` (library, settings, caches, logs) with its size."""
    return {p.relative_to(home).as_posix(): p.stat().st_size for p in sorted(home.rglob("*")) if p.is_file()}


def _apt(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(["apt-get", "-y", "-q", *args], capture_output=True, text=True, env=env, timeout=900,
                          check=False)


def _installed(command: list[str], home: Path, *, offline: bool = True) -> subprocess.CompletedProcess[str]:
    """``command`` as a user would run it from the installed package: fresh HOME, no dev environment,
    no display, and (``offline``) in a network namespace with no network at all."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8"}
    prefix = ["unshare", "--net"] if offline else []
    return subprocess.run([*prefix, *command], capture_output=True, text=True, env=env, cwd=home, timeout=900,
                          check=False)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="installs a package into this machine: runs as root only (as CI does)")
@pytest.mark.skipif(any(shutil.which(tool) is None for tool in ("dpkg", "apt-get", "dpkg-deb", "unshare")),
                    reason="needs a Debian-like system: dpkg, dpkg-deb, apt-get and unshare")
@pytest.mark.skipif(shutil.which("desktop-file-validate") is None,
                    reason="desktop-file-validate is missing (apt-get install desktop-file-utils)")
@pytest.mark.timeout(5400)
def test_the_package_installs_answers_offline_and_uninstalls_leaving_the_users_data(tmp_path: Path) -> None:
    deb = _built_package()
    home = tmp_path / "home"
    home.mkdir()
    installed = _apt("install", "--reinstall", str(deb))
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    depends = subprocess.run(["dpkg-deb", "--field", str(deb), "Depends"], capture_output=True, text=True,
                             check=True).stdout
    assert set(XCB_LIBRARIES.values()) <= {part.split()[0] for part in depends.split(",") if part.strip()}
    try:
        assert Path("/usr/bin/quire-desktop").resolve() == Path("/opt/quire/quire-desktop")
        assert Path("/usr/bin/quire").resolve() == Path("/opt/quire/quire-desktop")
        entry = subprocess.run(["desktop-file-validate", "/usr/share/applications/quire.desktop"],
                               capture_output=True, text=True, check=False)
        assert entry.returncode == 0 and not entry.stdout.strip(), entry.stdout + entry.stderr
        for icon in ("scalable/apps/quire.svg", "48x48/apps/quire.png", "256x256/apps/quire.png"):
            assert (Path("/usr/share/icons/hicolor") / icon).is_file()
        # torch is built into the ONNX files at packaging time and left out of the package.
        assert not list(Path("/opt/quire/_internal").glob("torch*"))

        self_test = _installed(["quire-desktop", "--self-test"], home)
        assert self_test.returncode == 0, self_test.stdout[-3000:] + self_test.stderr[-3000:]
        assert "self-test passed: 4 demo papers" in self_test.stdout

        doctor = _installed(["quire", "doctor"], home)
        assert doctor.returncode == 0, doctor.stdout[-3000:] + doctor.stderr[-3000:]
        data = home / ".local" / "share" / "Quire"
        assert str(data) in doctor.stdout

        # The demo as `make demo` runs it: ingest the bundled papers and answer its question.
        demo = _installed(["quire", "demo"], home)
        assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
        answer = demo.stdout.split("\nReferences\n", 1)
        assert len(answer) == 2, demo.stdout[-3000:] + demo.stderr[-3000:]
        assert re.search(r"^- .*\[\d+\]", answer[0], flags=re.MULTILINE), answer[0]
        assert re.search(r"^  \[1\] .*\bpp?\. \d", answer[1], flags=re.MULTILINE), answer[1]
        kept = _listing(home)
        assert any(path.startswith(".local/share/Quire/") for path in kept), kept
    finally:
        removed = _apt("remove", "quire")
        assert removed.returncode == 0, removed.stdout[-3000:] + removed.stderr[-3000:]
    assert not Path("/opt/quire").exists() and not Path("/usr/bin/quire").exists()
    assert _listing(home) == kept, "apt remove touched the user's data"
    # The package has no configuration files, so a removed one is gone from dpkg's database and
    # there is nothing left to purge: install it again and purge it from installed.
    reinstalled = _apt("install", str(deb))
    assert reinstalled.returncode == 0, reinstalled.stdout[-3000:] + reinstalled.stderr[-3000:]
    purged = _apt("purge", "quire")
    assert purged.returncode == 0, purged.stdout[-3000:] + purged.stderr[-3000:]
    assert not Path("/opt/quire").exists() and not Path("/usr/share/applications/quire.desktop").exists()
    assert _listing(home) == kept, "apt purge touched the user's data"


@pytest.mark.slow
@pytest.mark.skipif(any(shutil.which(tool) is None for tool in ("dpkg", "dpkg-deb", "lintian")),
                    reason="needs Debian's packaging tools: dpkg, dpkg-deb and lintian")
@pytest.mark.timeout(5400)
def test_lintian_accepts_the_package() -> None:
    # Each tag the package keeps is explained in the overrides it ships (docs/packaging.md says why);
    # a new error or warning fails here.
    deb = _built_package()
    checked = subprocess.run(["lintian", "--fail-on", "error,warning", str(deb)], capture_output=True, text=True,
                             timeout=1800, check=False)
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
