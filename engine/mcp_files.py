"""The MCP server's two files in the data folder: the HTTP bearer token and the running server's state.

``mcp-token`` holds the secret an HTTP client must send (created once, readable by the user alone: 0600);
``mcp-server.json`` says which server runs now (process id, transport, address, whether it may import),
so `quire doctor` can show it. Neither is library data: a read-only server writes only these.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path
from typing import Any

TOKEN_FILE = "mcp-token"
STATE_FILE = "mcp-server.json"


def token_path(home: Path) -> Path:
    return home / TOKEN_FILE


def read_or_create_token(home: Path) -> str:
    """The bearer token, made on first use; a file others can read is tightened to 0600 first."""
    path = token_path(home)
    if path.exists():
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token
    token = secrets.token_urlsafe(32)
    # O_EXCL-free but created 0600 from the start: the secret is never readable by others, not even briefly.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
    return token


def write_state(home: Path, state: dict[str, Any]) -> None:
    (home / STATE_FILE).write_text(json.dumps({"pid": os.getpid(), **state}), encoding="utf-8")


def clear_state(home: Path) -> None:
    """Forget the state this process wrote (another server's stays)."""
    state = read_state_file(home)
    if state and state.get("pid") == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            (home / STATE_FILE).unlink()


def read_state_file(home: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((home / STATE_FILE).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, OSError):
        return None
    return data if isinstance(data, dict) else None


def server_state(home: Path) -> dict[str, Any]:
    """What `quire doctor` shows: the running server (if its process is alive) and the token file."""
    token = token_path(home)
    shown: dict[str, Any] = {"running": False,
                             "token_file": str(token) if token.exists() else "none yet (quire mcp --http makes it)"}
    if token.exists():
        shown["token_file_private"] = not (token.stat().st_mode & 0o077)
    state = read_state_file(home)
    if state and _alive(state.get("pid")):
        shown.update(running=True, **{k: state[k] for k in ("pid", "transport", "url", "allow_import") if k in state})
    return shown


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
