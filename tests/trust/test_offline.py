"""The offline guarantee: the whole flow works with the network switched off, and nothing in it
even tries to connect.

Each flow runs as real `quire` commands in fresh processes whose Python refuses to create any
internet socket (a sitecustomize replaces ``socket.socket`` and the resolver before anything
else is imported). Every refused attempt is logged with its stack, so the second test can
show that not one was made — a library that quietly tried the hub and fell back would pass
the first test and fail this one. Unix sockets stay allowed: the parse workers talk over them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

_BLOCKER = '''
import os, socket, traceback

_LOG = os.environ["QUIRE_TEST_NETWORK_LOG"]
_Socket = socket.socket
_LOCAL = {getattr(socket, "AF_UNIX", -1), getattr(socket, "AF_NETLINK", -1)}


def _refuse(what):
    with open(_LOG, "a", encoding="utf-8") as log:
        log.write(f"--- {what} in pid {os.getpid()}\\n{''.join(traceback.format_stack(limit=12))}\\n")
    raise OSError(101, f"network is switched off in this test ({what})")


class _GuardedSocket(_Socket):
    def __init__(self, family=-1, type=-1, proto=-1, fileno=None):
        if fileno is None and family not in _LOCAL:
            _refuse(f"socket(family={family})")
        super().__init__(family, type, proto, fileno)


socket.socket = _GuardedSocket
socket.create_connection = lambda *a, **k: _refuse(f"create_connection{a[:1]}")
socket.getaddrinfo = lambda *a, **k: _refuse(f"getaddrinfo{a[:2]}")
socket.gethostbyname = lambda *a, **k: _refuse(f"gethostbyname{a[:1]}")
'''


@pytest.fixture
def offline_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "offline-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_BLOCKER, encoding="utf-8")
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("HF_", "TRANSFORMERS_", "QUIRE_"))}  # the engine must set what it needs
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO)])
    env["QUIRE_TEST_NETWORK_LOG"] = str(tmp_path / "network.log")
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def quire(env: dict[str, str], home: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine.cli.main", "--home", str(home), *args], env=env,
                          capture_output=True, text=True, timeout=timeout, check=False, cwd=REPO)


def attempts(env: dict[str, str]) -> str:
    log = Path(env["QUIRE_TEST_NETWORK_LOG"])
    return log.read_text(encoding="utf-8") if log.exists() else ""


def test_blocker_really_blocks_the_network(offline_env: dict[str, str]) -> None:
    probe = subprocess.run([sys.executable, "-c", "import socket; socket.create_connection(('192.0.2.1', 80), 1)"],
                           env=offline_env, capture_output=True, text=True, timeout=60, check=False)
    assert probe.returncode != 0 and "network is switched off" in probe.stderr
    assert "create_connection" in attempts(offline_env)


@pytest.mark.slow
def test_offline_ingest_search_ask_works_and_never_tries_the_network(offline_env: dict[str, str], tmp_path: Path,
                                                                     papers_dir: Path) -> None:
    home = tmp_path / "home"
    papers = [str(papers_dir / name) for name in ("mooney05.pdf", "bunescu-acl07.pdf")]

    ingest = quire(offline_env, home, "ingest", *papers, "--json")
    assert ingest.returncode == 0, ingest.stderr
    assert [r["outcome"] for r in json.loads(ingest.stdout)] == ["added", "added"]

    index = quire(offline_env, home, "index")
    assert index.returncode == 0, index.stderr
    search = quire(offline_env, home, "search", "relation extraction with kernels", "-k", "5", "--json")
    assert search.returncode == 0, search.stderr
    hits = json.loads(search.stdout)
    assert hits and any("kernel" in json.dumps(hit).lower() for hit in hits)

    ask = quire(offline_env, home, "ask", "What kernel is used for relation extraction?", "--json",
                "--no-feedback")
    assert ask.returncode == 0, ask.stderr
    answer = json.loads(ask.stdout)
    assert answer, "an answer record is printed"

    # Not a single internet socket, name lookup or connection was even attempted along the way.
    assert attempts(offline_env) == ""
