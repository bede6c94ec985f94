"""Where the MCP server's engine calls run: two serial lanes, each a thread with an Engine of its own.

The MCP SDK serves on an asyncio loop; an engine call (a search, an answer) is blocking work, so it runs
on a lane's thread while the loop keeps answering pings, other calls and cancellations. As in the app
(ui/engine_client.py), quick reads (catalog look-ups, search) never wait behind a long answer: answers,
claim checks, tables and imports run on the long lane. Each Engine is only ever called from its own
thread. A cancelled call sets its CancelToken, so the engine stops at its next check and the lane is
free again; its result is dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from engine.progress import CancelToken
from engine.service import Engine

T = TypeVar("T")


class Lane:
    """One thread and its Engine over the library at ``home``."""

    def __init__(self, name: str, home: Path) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"quire-mcp-{name}")
        self.engine: Engine = self._pool.submit(Engine, home).result()

    async def run(self, work: Callable[[Engine, CancelToken], T]) -> T:
        """Run ``work(engine, cancel)`` on this lane; cancelling the awaiting task cancels the work too."""
        cancel = CancelToken()
        future = asyncio.wrap_future(self._pool.submit(work, self.engine, cancel))
        try:
            return await asyncio.shield(future)
        except BaseException:
            cancel.cancel()  # the client cancelled or went away: the engine stops at its next check
            raise

    def close(self) -> None:
        self._pool.submit(self.engine.close).result()
        self._pool.shutdown(wait=True)


class Lanes:
    """The quick lane (catalog reads, search) and the long lane (answers, checks, tables, imports)."""

    def __init__(self, home: Path) -> None:
        self.quick = Lane("quick", home)
        self.long = Lane("long", home)

    def close(self) -> None:
        self.quick.close()
        self.long.close()
