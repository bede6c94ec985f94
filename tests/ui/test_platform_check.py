"""``quire-desktop`` on a minimal Linux: a message naming the packages to install, never Qt's SIGABRT."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from desktop.platform_check import XCB_LIBRARIES, missing_packages, platform_problem

X11 = {"DISPLAY": ":0"}


def test_missing_xcb_libraries_are_named_with_the_apt_command() -> None:
    absent = {"xcb-cursor", "xcb-keysyms"}
    message = platform_problem(X11, find=lambda name: None if name in absent else f"lib{name}.so", system="linux")
    assert "libxcb-cursor0, libxcb-keysyms1" in message
    assert "sudo apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1" in message
    assert "quire-desktop --self-test" in message


def test_nothing_to_say_when_qt_will_not_use_xcb_or_everything_is_there() -> None:
    none_found = lambda name: None  # noqa: E731
    assert platform_problem({"QT_QPA_PLATFORM": "offscreen"}, find=none_found, system="linux") == ""
    assert platform_problem({"WAYLAND_DISPLAY": "wayland-0"}, find=none_found, system="linux") == ""
    assert platform_problem(X11, find=none_found, system="darwin") == ""
    assert platform_problem(X11, find=lambda name: f"lib{name}.so", system="linux") == ""
    assert "DISPLAY" in platform_problem({}, find=lambda name: f"lib{name}.so", system="linux")


@pytest.mark.skipif(not sys.platform.startswith("linux") or not missing_packages(),
                    reason="every xcb library Qt needs is installed here")
def test_quire_desktop_prints_the_message_instead_of_aborting_where_libraries_are_missing() -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    done = subprocess.run([sys.executable, "-m", "desktop"], capture_output=True, text=True, timeout=120,
                          env={**env, "DISPLAY": ":0"})
    assert done.returncode == 1, (done.returncode, done.stderr)  # not -6 (SIGABRT)
    assert "sudo apt install" in done.stderr and "could not load the Qt platform plugin" not in done.stderr
    assert set(missing_packages()) <= set(XCB_LIBRARIES.values())
