"""`quire mcp --http`: the SDK's client with the token works; no token, a wrong token, a foreign Host or
Origin and a non-loopback bind are refused; a client that goes away mid-answer leaves the server serving."""

from __future__ import annotations

import asyncio
import re
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from fixtures.quire_mcp import quire_command, quire_environment
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

pytestmark = pytest.mark.slow

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def server(demo_home: Path) -> Iterator[tuple[str, str]]:
    """A running `quire mcp --http --port 0`: its URL and the token from the data folder."""
    process = subprocess.Popen(quire_command(demo_home, "mcp", "--http", "--port", "0"), stderr=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, env=quire_environment(), text=True)
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.search(r"serving (http://127\.0\.0\.1:\d+/mcp)", line)
    try:
        assert found, line
        token_file = demo_home / "mcp-token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        yield found.group(1), token_file.read_text().strip()
    finally:
        process.terminate()
        process.wait(timeout=30)


def post(url: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(url, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=30)


def with_token(url: str, token: str, scenario: object) -> None:
    async def main() -> None:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            await scenario(client)  # type: ignore[operator]

    asyncio.run(main())


def test_the_sdk_client_with_the_token_searches(server: tuple[str, str]) -> None:
    url, token = server

    async def scenario(client: Client) -> None:
        assert "search" in {tool.name for tool in (await client.list_tools()).tools}
        hits = (await client.call_tool("search", {"question": "literature graph", "k": 2})).structured_content
        assert hits and hits["hits"][0]["link"].startswith("quire://open?")

    with_token(url, token, scenario)


def test_no_token_is_refused_with_401(server: tuple[str, str]) -> None:
    answer = post(server[0], {})
    assert answer.status_code == 401 and "mcp-token" in answer.json()["message"]
    assert "mcp-session-id" not in answer.headers  # nothing ran: no session was opened


def test_a_wrong_token_is_refused_with_401(server: tuple[str, str]) -> None:
    url, token = server
    assert post(url, {"Authorization": f"Bearer {token[:-1]}x"}).status_code == 401
    assert post(url, {"Authorization": token}).status_code == 401  # the token without its scheme


def test_a_foreign_host_or_origin_is_refused(server: tuple[str, str]) -> None:
    url, token = server
    bearer = {"Authorization": f"Bearer {token}"}
    assert post(url, bearer).status_code == 200  # the same request from the loopback is served
    assert post(url, {**bearer, "Host": "attacker.example:80"}).status_code == 421
    assert post(url, {**bearer, "Origin": "http://attacker.example"}).status_code == 403


def test_a_non_loopback_bind_is_refused(demo_home: Path) -> None:
    done = subprocess.run(quire_command(demo_home, "mcp", "--http", "--host", "0.0.0.0", "--port", "0"),
                          capture_output=True, text=True, env=quire_environment(), timeout=120, check=False)
    assert done.returncode == 1 and "loopback" in done.stderr and "--allow-remote" in done.stderr


def test_a_client_gone_mid_answer_leaves_the_server_serving(server: tuple[str, str]) -> None:
    url, token = server

    async def leaving(client: Client) -> None:
        started = anyio.Event()

        async def heard(_: float, __: float | None, ___: str | None) -> None:
            started.set()

        async with anyio.create_task_group() as group:
            async def asking() -> None:
                await client.call_tool("ask", {"question": "What is S2ORC built from?"}, progress_callback=heard)

            group.start_soon(asking)
            with anyio.fail_after(120):
                await started.wait()
            group.cancel_scope.cancel()

    with_token(url, token, leaving)  # the client closes its session with the answer under way

    async def after(client: Client) -> None:
        with anyio.fail_after(120):
            result = await client.call_tool("get_passage", {"passage_id": "nope"})
            assert result.is_error
            hits = (await client.call_tool("search", {"question": "S2ORC", "k": 1})).structured_content
            assert hits and hits["hits"]

    with_token(url, token, after)
