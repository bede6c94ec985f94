"""`quire mcp`: serve the library to AI assistants over the Model Context Protocol (docs/mcp.md)."""

from __future__ import annotations

import argparse

from engine.service import Engine


def register(commands: argparse._SubParsersAction) -> None:
    mcp = commands.add_parser("mcp", help="serve the library to AI assistants (MCP over stdio, or --http)")
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP on 127.0.0.1 instead of stdio")
    mcp.add_argument("--port", type=int, default=8765, metavar="N", help="HTTP port (default 8765; 0: a free one)")
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP address (default 127.0.0.1, the loopback)")
    mcp.add_argument("--allow-remote", action="store_true",
                     help="allow --host to be an address other machines can reach (the token still applies)")
    mcp.add_argument("--allow-import", action="store_true",
                     help="let clients add PDFs and save answers in the history (default: read-only)")
    mcp.set_defaults(handler=_mcp)


def _mcp(engine: Engine, args: argparse.Namespace) -> int:
    from engine.mcp.run import serve_http, serve_stdio

    home = engine.paths.home
    engine.close()  # the server's lanes open engines of their own
    if args.http:
        serve_http(home, host=args.host, port=args.port, allow_import=args.allow_import,
                   allow_remote=args.allow_remote)
    else:
        serve_stdio(home, allow_import=args.allow_import)
    return 0
