"""Serving over streamable HTTP on the loopback address, behind a bearer token.

Three checks run before any MCP message is read: the bearer token (the one in ``<data folder>/mcp-token``,
compared in constant time; without it, 401 and nothing runs), then the SDK's DNS-rebinding guard (the Host
header must name the loopback address the server listens on, and an Origin header, when sent, a loopback
page), and a bound on the request body. Binding to any other address is refused unless asked for
explicitly (``--allow-remote``), because a token alone then guards the library from the network.
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

from engine.errors import EngineError

LOOPBACK_NAMES = ("localhost",)


class BindError(EngineError):
    """The address asked for is not one the server may listen on."""


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, allow_remote: bool) -> None:
    if not is_loopback(host) and not allow_remote:
        raise BindError(f"Refusing to listen on {host}: the MCP server listens on the loopback address "
                        "(127.0.0.1) only, so nothing on the network can reach your library. To serve other "
                        "machines anyway, add --allow-remote (every client then needs the token).")


class BearerToken:
    """ASGI middleware: a request without ``Authorization: Bearer <token>`` gets 401 before the app sees it."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if not hmac.compare_digest(given, self._expected):
            body = (b'{"error": "unauthorized", "message": "Send the token from the mcp-token file in Quire\'s data '
                    b'folder as: Authorization: Bearer TOKEN"}')
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def security_settings(host: str, port: int) -> Any:
    """The SDK's Host/Origin guard, allowing only this server's own loopback address."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = [f"{host}:{port}", f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"]
    origins = [f"http://{name}" for name in hosts]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)
