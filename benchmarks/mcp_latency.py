"""What MCP adds to a call: `search` and `get_passage` through `quire mcp` against the same Engine call in-process.

One run ingests the bundled demo papers into a temporary library, starts `quire mcp` (stdio, and
optionally `--http` on the loopback) as a subprocess and talks to it with the MCP SDK's own client, then
times the same calls on an Engine in this process. Queries cycle through a fixed list; each side is warmed
up first (models loaded, caches filled), so the difference is the protocol, the process boundary and the
JSON. Also times one `ask` (digest) end to end through MCP. Writes p50/p95 (ms) to the results file.

    python benchmarks/mcp_latency.py [--calls 100] [--http] [--json benchmarks/results/mcp_latency.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

from engine.service import Engine  # noqa: E402

QUERIES = ("literature graph nodes", "citation-informed transformers", "open research corpus of papers",
           "entity linking in scientific text", "document embeddings for recommendation",
           "sequence labeling of paper metadata", "how many papers are in S2ORC", "SPECTER evaluation tasks")


def environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "QUIRE_HOME"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(REPO), env.get("PYTHONPATH"))))
    return env


def command(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "engine.cli.main", "--home", str(home), *args]


def summary(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 2), "calls": len(ordered)}


def timed(calls: int, one: Callable[[int], Any]) -> list[float]:
    times = []
    for i in range(calls):
        start = time.perf_counter()
        one(i)
        times.append(time.perf_counter() - start)
    return times


async def atimed(calls: int, one: Callable[[int], Awaitable[Any]]) -> list[float]:
    times = []
    for i in range(calls):
        start = time.perf_counter()
        await one(i)
        times.append(time.perf_counter() - start)
    return times


async def through_mcp(client: Client, calls: int, passage_ids: list[str]) -> dict[str, Any]:
    async def search(i: int) -> None:
        result = await client.call_tool("search", {"question": QUERIES[i % len(QUERIES)], "k": 10})
        assert not result.is_error, result.content

    async def get_passage(i: int) -> None:
        result = await client.call_tool("get_passage", {"passage_id": passage_ids[i % len(passage_ids)]})
        assert not result.is_error, result.content

    for i in range(len(QUERIES)):  # warm: models loaded, caches filled
        await search(i)
    start = time.perf_counter()
    answer = await client.call_tool("ask", {"question": "How large is the Semantic Scholar literature graph?"})
    ask_seconds = time.perf_counter() - start
    assert not answer.is_error, answer.content
    return {"search": summary(await atimed(calls, search)), "get_passage": summary(await atimed(calls, get_passage)),
            "ask_digest_s": round(ask_seconds, 2)}


def in_process(home: Path, calls: int, passage_ids: list[str]) -> dict[str, Any]:
    with Engine(home) as engine:
        for query in QUERIES:
            engine.search(query, k=10, source="library")
        search = timed(calls, lambda i: engine.search(QUERIES[i % len(QUERIES)], k=10, source="library"))
        get = timed(calls, lambda i: (engine.passage(passage_ids[i % len(passage_ids)]),
                                      engine.document(passage_ids[i % len(passage_ids)].rsplit("-", 1)[0])))
    return {"search": summary(search), "get_passage": summary(get)}


async def over_stdio(home: Path, calls: int, passage_ids: list[str]) -> dict[str, Any]:
    argv = command(home, "mcp")
    async with Client(StdioServerParameters(command=argv[0], args=argv[1:], env=environment())) as client:
        return await through_mcp(client, calls, passage_ids)


async def over_http(home: Path, calls: int, passage_ids: list[str]) -> dict[str, Any]:
    process = subprocess.Popen(command(home, "mcp", "--http", "--port", "0"), stderr=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, env=environment(), text=True)
    try:
        assert process.stderr is not None
        found = re.search(r"serving (\S+/mcp)", process.stderr.readline())
        assert found, "the HTTP server did not start"
        token = (home / "mcp-token").read_text().strip()
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http, \
                Client(streamable_http_client(found.group(1), http_client=http)) as client:
            return await through_mcp(client, calls, passage_ids)
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--http", action="store_true", help="also time the streamable HTTP transport")
    parser.add_argument("--json", type=Path, default=REPO / "benchmarks" / "results" / "mcp_latency.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        subprocess.run(command(home, "ingest", str(REPO / "resources" / "demo")), check=True, env=environment(),
                       capture_output=True)
        with Engine(home) as engine:
            passage_ids = [p.id for d in engine.documents() for p in engine.passages(d.id)][:50]
        results: dict[str, Any] = {"in_process": in_process(home, args.calls, passage_ids),
                                   "mcp_stdio": asyncio.run(over_stdio(home, args.calls, passage_ids))}
        if args.http:
            results["mcp_http"] = asyncio.run(over_http(home, args.calls, passage_ids))
    for transport in [key for key in results if key.startswith("mcp_")]:
        results[f"{transport}_adds_p50_ms"] = {
            tool: round(results[transport][tool]["p50_ms"] - results["in_process"][tool]["p50_ms"], 2)
            for tool in ("search", "get_passage")}
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "load_1m": round(os.getloadavg()[0], 2)}
    results["command"] = "python benchmarks/mcp_latency.py " + " ".join(sys.argv[1:])
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
