"""The digest through `quire ask --digest`, as a researcher meets it: theme headings that name a topic, and
"nothing here answers" said within a narrowed --source scope as without it (real subprocesses)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fixtures.pdfs import text_pdf
from test_cli import quire

pytestmark = pytest.mark.slow

QUESTION = "How do graph attention networks weight a node's neighbours?"
GRAPH_PAGE = "\n".join([
    "The literature graph has 12M nodes of this type.",
    "This has several desirable implications for the nodes of the graph.",
    "We also experimented with other distance functions between the nodes of the graph.",
    "The resulting literature graph consists of more than 280M nodes representing papers and authors.",
    "Paper nodes are linked to author nodes by authorship edges in the literature graph.",
    "Each node of the graph keeps the neighbours it cites as citation edges.",
    "Entity linking connects the mentions in a paper to the nodes of the knowledge base.",
])
GAT = {"id": "gat", "title": "GRAPH ATTENTION NETWORKS", "text": (
    "We present graph attention networks (GATs), novel neural network architectures that operate on "
    "graph-structured data. By stacking layers in which nodes are able to attend over their neighbourhoods' "
    "features, graph attention networks weight the neighbours of a node differently, with attention coefficients "
    "computed from the features of the node and of each neighbour.")}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("digest")
    home = folder / "home"
    pdf = text_pdf(folder / "literature-graph.pdf", ["Construction of the Literature Graph\n\n" + GRAPH_PAGE])
    assert quire(home, "ingest", pdf).returncode == 0
    records = folder / "gat.jsonl"
    records.write_text(json.dumps(GAT) + "\n", encoding="utf-8")
    added = quire(home, "datastore", "add", records, "--name", "papers")
    assert added.returncode == 0, added.stderr
    return home


def _digest(home: Path, *scope: str) -> dict[str, Any]:
    done = quire(home, "ask", "--digest", *scope, QUESTION, "--json")
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_nothing_here_answers_within_a_narrowed_scope(home: Path) -> None:
    everywhere = _digest(home)
    assert everywhere["sections"][0] == "Answer"
    assert [p["source"] for p in everywhere["papers"]][:1] == ["papers"]
    library = _digest(home, "--source", "library")
    assert library["sections"][0] == "No answer found", library["sections"]
    assert library["sentences"][0]["text"].startswith("No passage found mentions “graph attention networks”")
    assert all(p["source"] == "library" for p in library["papers"])


def test_theme_headings_name_a_topic_never_a_sentence_opening(home: Path) -> None:
    done = quire(home, "ask", "--digest", "--source", "library", "What does the literature graph hold?", "--json")
    assert done.returncode == 0, done.stderr
    headings = [h for h in json.loads(done.stdout)["sections"][1:] if h]
    assert headings, "the themes of this library have a topic to name"
    for heading in headings:
        first = heading.split()[0].lower()
        assert first not in {"this", "we", "it", "our", "these", "there"}, headings
        assert not heading.endswith("."), headings
    printed = quire(home, "ask", "--digest", "--source", "library", "What does the literature graph hold?").stdout
    assert "## This has" not in printed and "## We also" not in printed
