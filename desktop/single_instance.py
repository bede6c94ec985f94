"""One app per library: a second launch hands its links and files to the app already open on it.

The running app listens on a local socket (QLocalServer) named after its library's data folder, so
two libraries can be open side by side, each in its own window. A launch first tries that socket:
when an app answers, it sends what it was asked to open (one line of JSON), waits for the app to say
it has it, and exits. When nobody answers, a socket file left behind by an app that crashed is
removed and this launch listens itself. Only the user who started the app may connect.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TypeGuard

from PySide6.QtCore import QDir, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

CONNECT_MS = 1000  # a live app accepts at once; a stale socket refuses at once
REPLY_MS = 10_000  # the running app may be busy on its UI thread for a moment
MAX_MESSAGE = 1 << 20  # links and paths, not data: anything larger is not from a launch
_OK, _REFUSED = b"ok\n", b"refused\n"


class HandoverError(Exception):
    """An app holds the library's socket but did not take what this launch handed it."""


def server_name(home: Path) -> str:
    """The socket of the app open on ``home``: one per library and user.

    In the user's private runtime folder where there is one (XDG_RUNTIME_DIR, mode 0700), else a name
    that Qt places in the temporary folder.
    """
    key = hashlib.sha256(f"{getpass.getuser()}\0{home.resolve()}".encode()).hexdigest()[:16]
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isdir(runtime):
        return os.path.join(runtime, f"quire-{key}.sock")
    return f"quire-{key}"


def hand_over(name: str, links: Sequence[str], paths: Sequence[str]) -> bool:
    """Give ``links`` and ``paths`` to the app listening on ``name``; False when no app is listening.

    Raises HandoverError when an app accepted the connection but did not confirm in time.
    """
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(CONNECT_MS):
        return False
    socket.write(json.dumps({"links": list(links), "paths": list(paths)}).encode() + b"\n")
    socket.flush()
    reply = b""
    while not reply.endswith(b"\n") and socket.waitForReadyRead(REPLY_MS):
        reply += bytes(socket.readAll().data())
    socket.disconnectFromServer()
    if reply != _OK:
        raise HandoverError("Quire is already open on this library but did not take the request"
                            f"{' (it refused it)' if reply == _REFUSED else ' in time'}. Close that window, or "
                            "wait until it responds, and try again.")
    return True


class InstanceServer(QObject):
    """Listens for later launches on the same library and re-emits what they hand over."""

    received = Signal(list, list)  # links, paths

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        self._buffers: dict[QLocalSocket, bytes] = {}

    def listen(self) -> bool:
        """Start listening; False, logged, if it cannot (the app then runs without taking handovers).

        Call it only when :func:`hand_over` found nobody: a socket file still there was then left by an
        app that did not close properly (a crash, a kill), and it is removed first.
        """
        if os.path.exists(self.socket_file):
            log.info("Removing the socket %s left by a Quire that did not close", self.socket_file)
        QLocalServer.removeServer(self.name)
        if self._server.listen(self.name):
            return True
        log.warning("Cannot listen on %s (%s): a second launch will open another window",
                    self.name, self._server.errorString())
        return False

    @property
    def socket_file(self) -> str:
        """Where the socket lives (on Unix a file; the name Qt gives its pipe elsewhere)."""
        return self.name if os.path.isabs(self.name) else os.path.join(QDir.tempPath(), self.name)

    def close(self) -> None:
        self._server.close()

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda socket=socket: self._read(socket))
            socket.disconnected.connect(lambda socket=socket: self._drop(socket))

    def _read(self, socket: QLocalSocket) -> None:
        data = self._buffers.get(socket, b"") + bytes(socket.readAll().data())
        if b"\n" not in data and len(data) <= MAX_MESSAGE:
            self._buffers[socket] = data
            return
        self._buffers[socket] = b""
        request = _parsed(data.partition(b"\n")[0]) if len(data) <= MAX_MESSAGE else None
        socket.write(_REFUSED if request is None else _OK)
        socket.flush()
        socket.disconnectFromServer()
        if request is not None:
            self.received.emit(*request)

    def _drop(self, socket: QLocalSocket) -> None:
        self._buffers.pop(socket, None)
        socket.deleteLater()


def _parsed(line: bytes) -> tuple[list[str], list[str]] | None:
    """The links and paths of a launch's request, or None (logged) when it is not one."""
    try:
        request = json.loads(line)
    except ValueError:
        request = None
    links, paths = (request.get("links"), request.get("paths")) if isinstance(request, dict) else (None, None)
    if not (_strings(links) and _strings(paths)):
        log.warning("Ignored a malformed request on the instance socket (%d bytes)", len(line))
        return None
    return list(links), list(paths)


def _strings(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
