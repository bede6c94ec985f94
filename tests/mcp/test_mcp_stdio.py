"""`quire mcp` over stdio, driven by the MCP SDK's own client on the demo library: every tool, its results
checked against the PDFs and each other, cancellation, and bad calls that must leave the server serving."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pymupdf
import pytest
from fixtures.quire_mcp import DEMO, quire_command, quire_environment
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.slow

TOOLS = {"search", "get_passage", "ask", "check_claim", "cite", "list_papers", "list_collections", "paper_table"}
GRAPH = "Construction of the Literature Graph in Semantic Scholar"


def stdio(home: Path, *args: str) -> StdioServerParameters:
    command = quire_command(home, "mcp", *args)
    return StdioServerParameters(command=command[0], args=command[1:], env=quire_environment())


def run(home: Path, scenario: Callable[[Client], Awaitable[None]], *args: str) -> None:
    async def main() -> None:
        async with Client(stdio(home, *args)) as client:
            await scenario(client)

    asyncio.run(main())


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def error(client: Client, name: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error, result.structured_content
    return " ".join(getattr(block, "text", "") for block in result.content)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z]{4,}", text.lower())


def page_words(paper_path: Path, page: int) -> set[str]:
    with pymupdf.open(paper_path) as document:
        return set(words(document[page - 1].get_text()))


def demo_paths(home: Path) -> dict[str, Path]:
    """Each demo paper's id, as `quire library list --json` names it, with its PDF."""
    listed = subprocess.run(quire_command(home, "library", "list", "--json"), capture_output=True, text=True,
                            env=quire_environment(), timeout=120, check=True)
    return {row["id"]: Path(row["path"]) for row in json.loads(listed.stdout)}


def test_tools_are_listed_with_schemas_and_descriptions(demo_home: Path) -> None:
    async def scenario(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == TOOLS  # read-only: no import tool without --allow-import
        for tool in tools.values():
            assert tool.description and "\n" not in tool.description
            assert tool.input_schema["type"] == "object"
        assert tools["search"].input_schema["required"] == ["question"]
        assert tools["ask"].input_schema["properties"]["mode"]["enum"] == ["digest", "write"]
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert templates == {"quire://paper/{paper}", "quire://paper/{paper}/page/{page}"}

    run(demo_home, scenario)


def test_search_hits_are_on_the_pages_they_name(demo_home: Path) -> None:
    paths = demo_paths(demo_home)

    async def scenario(client: Client) -> None:
        hits = (await call(client, "search", {"question": "how many nodes does the literature graph have", "k": 5}))[
            "hits"]
        assert hits and hits[0]["title"] == GRAPH
        for hit in hits:
            assert hit["link"].startswith(f"quire://open?paper={hit['paper']}&page={hit['page']}&")
            # The quote's words are printed on the page(s) the hit names, in the PDF itself.
            printed = set().union(*(page_words(paths[hit["paper"]], p) for p in range(hit["page"],
                                                                                      hit["page_end"] + 1)))
            quoted = set(words(hit["quote"]))
            assert len(quoted & printed) >= 0.9 * len(quoted)
            if hit["page"] == hit["page_end"]:
                elsewhere = page_words(paths[hit["paper"]], hit["page"] % 2 + 1) if hit["page"] > 0 else set()
                assert quoted - elsewhere  # the quote is not just words every page has
        passage = await call(client, "get_passage", {"passage_id": hits[0]["passage_id"]})
        assert passage["text"] == hits[0]["quote"] and passage["page"] == hits[0]["page"]
        assert passage["bib"]["title"] == GRAPH and passage["link"].startswith("quire://open?")

    run(demo_home, scenario)


def test_an_answers_citations_resolve_with_get_passage(demo_home: Path) -> None:
    async def scenario(client: Client) -> None:
        stages: list[str] = []

        async def heard(_: float, __: float | None, message: str | None) -> None:
            stages.append(message or "")

        result = await client.call_tool("ask", {"question": "How large is the Semantic Scholar literature graph?",
                                                "mode": "digest"}, progress_callback=heard)
        assert not result.is_error and result.structured_content
        answer = result.structured_content
        assert "retrieving" in stages  # progress notifications while it ran
        cited = [c for s in answer["sentences"] for c in s["citations"]]
        assert cited and answer["references"]
        for sentence in answer["sentences"]:
            assert sentence["verification"] in ("supported", "partly supported", "not confirmed", "contradicted")
        for citation in cited:
            passage = await call(client, "get_passage", {"passage_id": citation["passage_id"]})
            assert citation["quote"] in passage["text"]
            assert citation["link"].startswith(f"quire://open?paper={passage['paper']}&")

    run(demo_home, scenario)


def test_check_claim_tells_a_sentence_from_its_negation(demo_home: Path) -> None:
    async def scenario(client: Client) -> None:
        said = await call(client, "check_claim", {"claim": "The literature graph consists of more than 280M nodes."})
        assert said["verdict"] == "supported" and said["supporting"][0]["title"] == GRAPH
        negated = await call(client, "check_claim",
                             {"claim": "The literature graph does not consist of more than 280M nodes."})
        assert negated["verdict"] != "supported"
        passage_id = said["supporting"][0]["passage_id"]
        given = await call(client, "check_claim", {"claim": "The literature graph does not consist of more than "
                                                            "280M nodes.", "passage_ids": [passage_id]})
        assert given["verdict"] != "supported"

    run(demo_home, scenario)


def test_cite_lists_and_resources(demo_home: Path) -> None:
    async def scenario(client: Client) -> None:
        listed = await call(client, "list_papers", {"limit": 3})
        assert listed["total"] == 4 and len(listed["papers"]) == 3 and listed["next_offset"] == 3
        rest = await call(client, "list_papers", {"offset": 3})
        assert len(rest["papers"]) == 1 and rest["next_offset"] is None
        graph = (await call(client, "list_papers", {"words": "literature graph"}))["papers"]
        assert [p["title"] for p in graph] == [GRAPH]
        assert (await call(client, "list_papers", {"year_from": 2021}))["total"] == 1
        assert (await call(client, "list_collections", {}))["collections"] == []
        paper = graph[0]["paper"]
        for format_name in ("bibtex", "ris", "csl-json"):
            text = (await call(client, "cite", {"papers": [paper], "format": format_name}))["text"]
            exported = subprocess.run(quire_command(demo_home, "library", "export", paper, "--format", format_name),
                                      capture_output=True, text=True, env=quire_environment(), timeout=120,
                                      check=True).stdout
            assert text == exported and "Ammar" in text  # the record as `quire library export` writes it
        record = json.loads((await client.read_resource(f"quire://paper/{paper}")).contents[0].text)
        assert record["title"] == GRAPH
        page = (await client.read_resource(f"quire://paper/{paper}/page/1")).contents[0].text
        assert "literature graph" in page.lower()
        table = await call(client, "paper_table", {"question": "What data is used?", "papers": [paper],
                                                   "columns": ["Data=What data is used?"]})
        assert [row["paper"] for row in table["rows"]] == [paper]

    run(demo_home, scenario)


def test_bad_calls_get_errors_and_the_server_keeps_serving(demo_home: Path) -> None:
    async def scenario(client: Client) -> None:
        assert "at most 4000 characters" in await error(client, "search", {"question": "x" * 1_000_000})
        assert "valid string" in await error(client, "search", {"question": 5})
        assert "valid integer" in await error(client, "search", {"question": "graph", "k": "many"})
        assert "Unknown tool" in await error(client, "remove_everything", {})
        assert "No passage has the id" in await error(client, "get_passage", {"passage_id": "0000-1"})
        assert "No document with id" in await error(client, "cite", {"papers": ["ffffffffffffffff"]})
        assert "No collection is named" in await error(client, "search", {"question": "graph",
                                                                          "collection": "Nope"})
        assert (await call(client, "search", {"question": "literature graph", "k": 1}))["hits"]

    run(demo_home, scenario)


def test_a_cancelled_ask_stops_and_the_next_call_answers(demo_home: Path) -> None:
    async def scenario(client: Client) -> None:
        started = anyio.Event()

        async def heard(_: float, __: float | None, ___: str | None) -> None:
            started.set()

        async with anyio.create_task_group() as group:
            async def asking() -> None:
                await client.call_tool("ask", {"question": "What does SPECTER embed?"}, progress_callback=heard)

            group.start_soon(asking)
            with anyio.fail_after(120):
                await started.wait()
            group.cancel_scope.cancel()  # the client abandons the call: the SDK sends notifications/cancelled
        with anyio.fail_after(120):
            assert (await call(client, "search", {"question": "citation-informed transformers", "k": 1}))["hits"]

    run(demo_home, scenario)


def test_import_is_offered_only_when_allowed(tmp_path: Path) -> None:
    home = tmp_path / "home"

    async def scenario(client: Client) -> None:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "import_papers" in names
        done = await call(client, "import_papers", {"paths": [str(DEMO / "N18-3011.pdf")]})
        assert [r["outcome"] for r in done["results"]] == ["added"]
        assert (await call(client, "list_papers", {}))["total"] == 1

    run(home, scenario, "--allow-import")


def test_the_server_ends_when_its_client_goes_away(demo_home: Path) -> None:
    """A client that closes stdin mid-answer: the server process exits instead of lingering."""
    process = subprocess.Popen(quire_command(demo_home, "mcp"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=quire_environment())
    assert process.stdin is not None
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask", "arguments": {
            "question": "What is S2ORC?"}}}]
    process.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
    process.stdin.flush()
    assert process.stdout is not None
    process.stdout.readline()  # the initialize result: the ask is under way
    process.stdin.close()
    try:
        assert process.wait(timeout=120) is not None
    finally:
        if process.poll() is None:
            process.kill()
    assert process.stderr is not None
    assert "Traceback" not in process.stderr.read().decode()
