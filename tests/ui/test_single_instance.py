"""One app per library: a second launch hands its link to the running app and exits.

The running app is this test process (a real window on a real library, listening as ``quire-desktop``
does); the second launch is a real ``quire-desktop URL`` subprocess. A stale socket is made the way a
crash makes one: a process that listens and is killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from desktop.app import accept_handovers
from desktop.single_instance import InstanceServer, hand_over, server_name
from engine.links import open_link
from tests.ui.test_open_link import indexed_paper, link_window, passage_with  # noqa: F401  (a fixture)
from ui.engine_client import EngineClient
from ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


def launch(*arguments: str) -> subprocess.Popen[str]:
    """A process of this checkout's code, without a display."""
    environment = {**os.environ, "QT_QPA_PLATFORM": "offscreen",
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, *arguments], cwd=ROOT, env=environment, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finished(qtbot: QtBot, process: subprocess.Popen[str], timeout_ms: int = 120_000) -> tuple[int, str]:
    """Wait for ``process`` while this process's event loop runs (the running app must answer it)."""
    qtbot.waitUntil(lambda: process.poll() is not None, timeout=timeout_ms)
    out, err = process.communicate()
    return process.returncode, out + err


def hand_over_in_a_process(qtbot: QtBot, name: str, link: str) -> tuple[int, str]:
    code = ("import sys; from PySide6.QtCore import QCoreApplication; app = QCoreApplication([]); "
            "from desktop.single_instance import hand_over; "
            "sys.exit(0 if hand_over(sys.argv[1], [sys.argv[2]], []) else 3)")
    return finished(qtbot, launch("-c", code, name, link))


@pytest.mark.slow
def test_a_second_launch_with_a_link_hands_it_to_the_running_app_and_exits(
        qtbot: QtBot, link_window: MainWindow, client: EngineClient, tmp_path: Path) -> None:  # noqa: F811
    paper, doc_id = indexed_paper(qtbot, link_window, client, tmp_path)
    quote = "Page 3 line 20: studies of support judges report finding 60 here."
    passage = passage_with(client.home, doc_id, quote)
    instance = InstanceServer(server_name(client.home))
    assert instance.listen()
    accept_handovers(instance, link_window)
    try:
        code, output = finished(qtbot, launch("-m", "desktop", open_link(doc_id, 3, passage.id, quote),
                                              "--home", str(client.home)))
    finally:
        instance.close()
    assert code == 0, output
    viewer = link_window.viewer
    qtbot.waitUntil(lambda: viewer.path == str(paper) and bool(viewer.quote_rects), timeout=30_000)
    start = passage.text.index(quote)
    assert viewer.current_page == 3
    assert viewer.quote_rects == passage.rects_for_span(start, start + len(quote))
    assert link_window.model.rowCount() == 1, "the second launch opened no library of its own"


@pytest.mark.slow
def test_a_socket_left_by_a_crashed_app_is_removed_and_each_library_has_its_own(
        qtbot: QtBot, tmp_path: Path) -> None:
    first, second = server_name(tmp_path / "first"), server_name(tmp_path / "second")
    assert first != second
    crashed = launch("-c", "import os, signal, sys; from PySide6.QtCore import QCoreApplication; "
                     "from PySide6.QtNetwork import QLocalServer; app = QCoreApplication([]); s = QLocalServer(); "
                     "assert s.listen(sys.argv[1]), s.errorString(); print(s.fullServerName(), flush=True); "
                     "os.kill(os.getpid(), signal.SIGKILL)", first)
    code, output = finished(qtbot, crashed)
    assert code == -signal.SIGKILL, output
    left_behind = Path(output.strip())
    assert left_behind.exists(), "the killed app left its socket file"
    assert hand_over(first, ["quire://open?paper=faa5aceb428cdeb9"], []) is False, "nobody answers on it"

    received: list[tuple[list[str], list[str]]] = []
    running, other = InstanceServer(first), InstanceServer(second)
    running.received.connect(lambda links, paths: received.append((links, paths)))
    other.received.connect(lambda links, paths: received.append((["wrong library"], paths)))
    try:
        assert running.listen(), "the stale socket was removed and the app listens"
        assert Path(running.socket_file) == left_behind
        assert other.listen(), "a second library's app listens beside it"
        link = "quire://open?paper=faa5aceb428cdeb9&page=2"
        code, output = hand_over_in_a_process(qtbot, first, link)
        assert code == 0, output
        qtbot.waitUntil(lambda: bool(received), timeout=10_000)
        assert received == [([link], [])]

        # Something that is not a launch's request is refused, and nothing is opened.
        garbage = ("import sys; from PySide6.QtCore import QCoreApplication; from PySide6.QtNetwork import "
                   "QLocalSocket; app = QCoreApplication([]); s = QLocalSocket(); s.connectToServer(sys.argv[1]); "
                   "assert s.waitForConnected(5000); s.write(b'{\"links\": \"quire://x\"}\\n'); s.flush(); "
                   "s.waitForReadyRead(10000); print(bytes(s.readAll().data()).decode().strip())")
        code, output = finished(qtbot, launch("-c", garbage, first))
        assert code == 0 and output.strip().endswith("refused"), output
        assert received == [([link], [])]
    finally:
        running.close()
        other.close()


def test_without_a_running_app_a_launch_finds_nobody_to_hand_over_to(tmp_path: Path) -> None:
    assert hand_over(server_name(tmp_path / "nobody"), ["quire://open?paper=faa5aceb428cdeb9"], []) is False
