"""Before Qt starts on Linux: name what its X11 (xcb) plugin lacks, or the display that does not
answer, instead of Qt's abort.

Qt's xcb platform plugin loads libxcb-cursor, libxcb-icccm, libxcb-keysyms and a few more at run
time, then connects to the X server named by DISPLAY; when a library is missing or no server
answers, Qt prints "could not load the Qt platform plugin" and aborts the process with SIGABRT.
The check names the Debian/Ubuntu packages to install, or says that no display answers, and the
other ways to run Quire.

On a Wayland session (WAYLAND_DISPLAY set) Qt first connects to the compositor's socket; when none
answers it falls back to X11, and with no DISPLAY either it aborts the same way. So a Wayland
socket nobody listens on is checked too.
"""

from __future__ import annotations

import ctypes.util
import os
import socket
import sys
from collections.abc import Callable, Mapping

# The library Qt's xcb plugin loads -> the Debian/Ubuntu package that ships it.
XCB_LIBRARIES = {
    "xcb-cursor": "libxcb-cursor0",
    "xcb-icccm": "libxcb-icccm4",
    "xcb-keysyms": "libxcb-keysyms1",
    "xcb-image": "libxcb-image0",
    "xcb-render-util": "libxcb-render-util0",
    "xcb-xkb": "libxcb-xkb1",
    "xkbcommon-x11": "libxkbcommon-x11-0",
    "xcb-randr": "libxcb-randr0",
    "xcb-shape": "libxcb-shape0",
}


def _chosen_platform(environ: Mapping[str, str]) -> str:
    return environ.get("QT_QPA_PLATFORM", "").split(":", 1)[0].split(";", 1)[0].strip()


def uses_xcb(environ: Mapping[str, str]) -> bool:
    """Whether Qt will pick its X11 plugin: asked for, or the default on an X11 (not Wayland) session."""
    platform = _chosen_platform(environ)
    if platform:
        return platform == "xcb"
    return not environ.get("WAYLAND_DISPLAY")


def uses_wayland(environ: Mapping[str, str]) -> bool:
    """Whether Qt will try its Wayland plugin first: asked for, or the default where WAYLAND_DISPLAY is set."""
    platform = _chosen_platform(environ)
    if platform:
        return platform.startswith("wayland")
    return bool(environ.get("WAYLAND_DISPLAY"))


def wayland_socket(environ: Mapping[str, str]) -> str:
    """The compositor's socket as libwayland finds it: WAYLAND_DISPLAY itself when it is a path, else
    that name (``wayland-0`` by default) in XDG_RUNTIME_DIR; ``""`` when there is no runtime folder."""
    name = environ.get("WAYLAND_DISPLAY") or "wayland-0"
    if os.path.isabs(name):
        return name
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    return os.path.join(runtime, name) if runtime else ""


def compositor_answers(path: str) -> bool:
    """Whether a Wayland compositor accepts a connection on the socket at ``path``."""
    if not path:
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(2.0)
        try:
            connection.connect(path)
        except OSError:
            return False
    return True


def missing_packages(find: Callable[[str], str | None] = ctypes.util.find_library) -> list[str]:
    """The Debian packages whose xcb libraries cannot be found, in a stable order."""
    return [package for library, package in XCB_LIBRARIES.items() if not find(library)]


def x_server_answers(display: str) -> bool:
    """Whether an X server accepts a connection on ``display``, asked through libxcb as Qt would."""
    path = ctypes.util.find_library("xcb")
    if not path:
        return False
    try:
        xcb = ctypes.CDLL(path)
    except OSError:
        return False
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    # xcb_connect never returns NULL: a failed connection is an error object, freed by disconnect.
    connection = xcb.xcb_connect(display.encode(), None)
    try:
        return bool(connection) and xcb.xcb_connection_has_error(connection) == 0
    finally:
        if connection:
            xcb.xcb_disconnect(connection)


def platform_problem(environ: Mapping[str, str] | None = None,
                     find: Callable[[str], str | None] = ctypes.util.find_library,
                     system: str = sys.platform,
                     answers: Callable[[str], bool] = x_server_answers,
                     compositor: Callable[[str], bool] = compositor_answers) -> str:
    """A message saying what to install or set before Qt can open a window; ``""`` when all is well."""
    environ = os.environ if environ is None else environ
    if not system.startswith("linux"):
        return ""
    if uses_wayland(environ):
        socket_path = wayland_socket(environ)
        if compositor(socket_path):
            return ""
        # Qt falls back to X11 only when no platform was named and there is a DISPLAY to try.
        where = socket_path or f"WAYLAND_DISPLAY={environ.get('WAYLAND_DISPLAY', '')} (XDG_RUNTIME_DIR is not set)"
        if _chosen_platform(environ):
            return (f"No Wayland compositor answers on {where}, and QT_QPA_PLATFORM asks for Wayland, so Quire "
                    "cannot open its window. Run it from a Wayland session, unset QT_QPA_PLATFORM, or use the "
                    "`quire` command line; `quire-desktop --self-test` runs without a display.")
        if not environ.get("DISPLAY"):
            return (f"No Wayland compositor answers on {where}, and there is no X display to fall back to "
                    "(DISPLAY is not set), so Quire cannot open its window. Run it from a desktop session, "
                    "or use the `quire` command line; `quire-desktop --self-test` runs without a display.")
    elif not uses_xcb(environ):
        return ""
    missing = missing_packages(find)
    if missing:
        return ("Quire's window needs system libraries that are not installed: " + ", ".join(missing) + ".\n"
                "On Debian or Ubuntu install them with:\n"
                f"    sudo apt install {' '.join(XCB_LIBRARIES.values())}\n"
                "(on Fedora: sudo dnf install xcb-util-cursor xcb-util-wm xcb-util-keysyms xcb-util-image "
                "xcb-util-renderutil libxkbcommon-x11).\n"
                "Everything else works without them: the `quire` command line, and `quire-desktop --self-test`.")
    display = environ.get("DISPLAY", "")
    if not display:
        return ("There is no display to open Quire's window on (DISPLAY is not set). Run it from a desktop "
                "session, or use the `quire` command line; `quire-desktop --self-test` runs without a display.")
    if not answers(display):
        return (f"No X server answers on DISPLAY={display}, so Quire cannot open its window. Run it from a "
                "desktop session (over SSH: ssh -X), or use the `quire` command line; `quire-desktop "
                "--self-test` runs without a display.")
    return ""
