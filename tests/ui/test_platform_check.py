"""``quire-desktop`` on a minimal Linux: a message naming the packages to install, never Qt's SIGABRT."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.platform_check import (
    XCB_LIBRARIES,
    compositor_answers,
    missing_packages,
    platform_problem,
    wayland_socket,
)

X11 = {"DISPLAY": ":0"}


def _installed(name: str) -> str:
    return f"lib{name}.so"


def test_a_display_nobody_answers_on_is_named() -> None:
    message = platform_problem({"DISPLAY": ":87"}, find=_installed, system="linux", answers=lambda _: False)
    assert "No X server answers on DISPLAY=:87" in message and "--self-test" in message
    assert platform_problem({"DISPLAY": ":0"}, find=_installed, system="linux", answers=lambda _: True) == ""


def test_missing_xcb_libraries_are_named_with_the_apt_command() -> None:
    absent = {"xcb-cursor", "xcb-keysyms"}
    message = platform_problem(X11, find=lambda name: None if name in absent else f"lib{name}.so", system="linux")
    assert "libxcb-cursor0, libxcb-keysyms1" in message
    assert "sudo apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1" in message
    assert "quire-desktop --self-test" in message


def test_nothing_to_say_when_qt_will_not_use_xcb_or_everything_is_there() -> None:
    none_found = lambda name: None  # noqa: E731
    assert platform_problem({"QT_QPA_PLATFORM": "offscreen"}, find=none_found, system="linux") == ""
    assert platform_problem({"WAYLAND_DISPLAY": "wayland-0"}, find=none_found, system="linux",
                            compositor=lambda _: True) == ""
    assert platform_problem(X11, find=none_found, system="darwin") == ""
    assert platform_problem(X11, find=_installed, system="linux", answers=lambda _: True) == ""
    assert "DISPLAY" in platform_problem({}, find=_installed, system="linux")


def _no_display_env(display: str) -> dict[str, str]:
    """This machine's environment with no reachable display: ``display`` (empty, or a number no X
    server listens on), no Wayland, and Qt left to choose its plugin as it would for a user."""
    env = {key: value for key, value in os.environ.items() if key not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    return {**env, "DISPLAY": display, "WAYLAND_DISPLAY": ""}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Qt's xcb plugin is Linux's")
@pytest.mark.parametrize("display", ["", ":87"])
def test_quire_desktop_without_a_display_says_so_and_exits_non_zero(display: str) -> None:
    """Whichever xcb libraries this machine has: missing ones are named, else the missing display is."""
    done = subprocess.run([sys.executable, "-m", "desktop"], capture_output=True, text=True, timeout=120,
                          env=_no_display_env(display))
    assert done.returncode == 1, (done.returncode, done.stderr)  # not -6 (SIGABRT)
    assert "could not load the Qt platform plugin" not in done.stderr
    if missing_packages():
        assert "sudo apt install" in done.stderr
    else:
        assert "DISPLAY" in done.stderr and "--self-test" in done.stderr
    assert set(missing_packages()) <= set(XCB_LIBRARIES.values())


def test_a_wayland_socket_nobody_listens_on_without_a_display_is_named(tmp_path: Path) -> None:
    env = {"WAYLAND_DISPLAY": "wayland-9", "XDG_RUNTIME_DIR": str(tmp_path)}
    assert wayland_socket(env) == str(tmp_path / "wayland-9")
    message = platform_problem(env, find=_installed, system="linux")  # the real check: no socket there
    assert f"No Wayland compositor answers on {tmp_path / 'wayland-9'}" in message
    assert "DISPLAY is not set" in message and "--self-test" in message
    # With an X display to fall back to, Qt uses it: the X checks decide.
    assert platform_problem({**env, "DISPLAY": ":0"}, find=_installed, system="linux", answers=lambda _: True) == ""
    assert "QT_QPA_PLATFORM" in platform_problem({**env, "DISPLAY": ":0", "QT_QPA_PLATFORM": "wayland"},
                                                 find=_installed, system="linux")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Wayland sockets are Linux's")
def test_a_listening_compositor_socket_answers(tmp_path: Path) -> None:
    path = tmp_path / "wayland-1"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(1)
        assert compositor_answers(str(path))
        assert platform_problem({"WAYLAND_DISPLAY": str(path)}, find=_installed, system="linux") == ""
    assert not compositor_answers(str(path))  # closed: a stale socket file nobody listens on
    assert not compositor_answers("")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Qt's Wayland plugin is tried on Linux")
def test_quire_desktop_with_a_dead_wayland_display_says_so_instead_of_aborting(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("QT_QPA_PLATFORM", "DISPLAY")}
    env.update(WAYLAND_DISPLAY="wayland-7", XDG_RUNTIME_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "desktop"], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 1, (done.returncode, done.stderr)  # not -6 (SIGABRT)
    assert "No Wayland compositor answers" in done.stderr and "--self-test" in done.stderr
