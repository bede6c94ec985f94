"""An MCP client searches a library while another process ingests into it: every call answers, no paper is lost."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest
from fixtures.quire_mcp import DEMO, quire_command, quire_environment
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.slow


def test_searching_while_papers_are_ingested(tmp_path: Path) -> None:
    home, later = tmp_path / "home", tmp_path / "later"
    later.mkdir()
    for pdf in DEMO.glob("*.pdf"):
        if pdf.name != "N18-3011.pdf":
            shutil.copy(pdf, later / pdf.name)
    first = subprocess.run(quire_command(home, "ingest", str(DEMO / "N18-3011.pdf")), capture_output=True,
                           text=True, env=quire_environment(), timeout=300, check=False)
    assert first.returncode == 0, first.stderr

    async def main() -> None:
        argv = quire_command(home, "mcp")
        async with Client(StdioServerParameters(command=argv[0], args=argv[1:], env=quire_environment())) as client:
            ingest = subprocess.Popen(quire_command(home, "ingest", str(later)), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, env=quire_environment(), text=True)
            answered = 0
            while ingest.poll() is None or answered < 3:
                for name, arguments in (("search", {"question": "citation graph of papers", "k": 5}),
                                        ("list_papers", {})):
                    result = await client.call_tool(name, arguments)
                    assert not result.is_error, result.content
                    answered += 1
            assert ingest.wait(timeout=300) == 0, ingest.stderr.read() if ingest.stderr else ""
            listed = (await client.call_tool("list_papers", {})).structured_content
            assert listed and listed["total"] == 4  # nothing the ingest wrote is lost to the reader
            found = (await client.call_tool("search", {"question": "SPECTER citation-informed transformers",
                                                       "k": 3})).structured_content
            assert found and found["hits"][0]["title"].startswith("SPECTER")
            assert answered >= 3

    asyncio.run(main())
