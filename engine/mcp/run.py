"""Starting the server: over stdio (what desktop assistants launch) or over loopback HTTP."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import anyio

from engine.mcp.http import BearerToken, check_bind, security_settings
from engine.mcp.server import QuireServer
from engine.mcp_files import clear_state, read_or_create_token, token_path, write_state

MCP_PATH = "/mcp"


def serve_stdio(home: Path, *, allow_import: bool = False) -> None:
    """Serve one client on stdin/stdout until it closes them."""
    server = QuireServer(home, allow_import=allow_import)
    write_state(home, {"transport": "stdio", "allow_import": allow_import})
    try:
        anyio.run(server.mcp.run_stdio_async)
    finally:
        clear_state(home)
        server.close()


def serve_http(home: Path, *, host: str = "127.0.0.1", port: int = 8765, allow_import: bool = False,
               allow_remote: bool = False) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` until interrupted; port 0 takes a free one."""
    import uvicorn

    check_bind(host, allow_remote)
    token = read_or_create_token(home)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
        listener.listen(64)  # listening before the address is printed: a client that connects at once waits
    except OSError as exc:
        listener.close()
        from engine.mcp.http import BindError

        raise BindError(f"Could not listen on {host}:{port} ({exc.strerror or exc}); choose another port with "
                        "--port N.") from None
    port = listener.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{port}{MCP_PATH}"
    server = QuireServer(home, allow_import=allow_import)
    app = server.mcp.streamable_http_app(streamable_http_path=MCP_PATH, host=host,
                                         transport_security=security_settings(shown_host, port))
    config = uvicorn.Config(BearerToken(app, token), log_level="warning", lifespan="on")
    write_state(home, {"transport": "http", "url": url, "allow_import": allow_import})
    print(f"quire mcp: serving {url} (send the token in {token_path(home)} as: Authorization: Bearer TOKEN)",
          file=sys.stderr, flush=True)
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        clear_state(home)
        server.close()
