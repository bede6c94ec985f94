"""`quire ask` end to end on two real papers: the answer first, references by paper; and `quire table`.

Real subprocesses with the packaged embedder and the digest (no LM prose), as a user's script runs them.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fixtures.ris import read_ris
from test_cli import quire

pytestmark = pytest.mark.slow

PAPERS = ("2020.acl-main.207.pdf", "2020.acl-main.447.pdf")  # SPECTER, S2ORC
QUESTION = "How is SPECTER trained and what data does it learn from?"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, papers_dir: Path) -> Path:
    folder = tmp_path_factory.mktemp("ask")
    done = quire(folder, "ingest", *(papers_dir / name for name in PAPERS))
    assert done.returncode == 0, done.stderr
    return folder


def test_json_answer_leads_with_a_quote_and_numbers_papers_in_order(home: Path) -> None:
    done = quire(home, "ask", QUESTION, "--digest", "--json", "--no-save")
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    numbers = [int(n) for n in re.findall(r"\[(\d+)\]", answer["answer"])]
    assert numbers and sorted(set(numbers)) == list(range(1, max(numbers) + 1))
    assert numbers[0] == 1 and answer["sections"][0] == "Answer"
    assert answer["answer"].startswith("“") and answer["papers"][0]["title"].startswith("SPECTER")
    cited = {c["passage_id"] for s in answer["sentences"] for c in s["quotes"]}
    texts = {c["passage_id"]: c["text"] for c in answer["citations"] + answer["contexts"]}
    for sentence in answer["sentences"]:
        for quote in sentence["quotes"]:
            assert quote["quote"] in texts[quote["passage_id"]]
    assert cited <= set(texts)


def test_table_csv_has_a_row_per_paper_with_the_quote_behind_each_answer(home: Path) -> None:
    done = quire(home, "table", "What does each paper contribute to scientific document representation?",
                 "--column", "Answer", "--quotes", "--csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert rows[0] == ["paper", "authors", "year", "Answer", "Answer quote", "Answer page"]
    assert 1 <= len(rows) - 1 <= len(PAPERS)
    assert any(r[4] for r in rows[1:]) and all(r[3] == r[4] for r in rows[1:] if r[4])  # quotes, verbatim


@pytest.mark.parametrize("flag", ["--table", "--csv"])
def test_a_table_asked_of_quire_ask_points_to_quire_table(home: Path, flag: str) -> None:
    done = quire(home, "ask", QUESTION, flag)
    assert done.returncode == 2 and "quire table" in done.stderr and flag in done.stderr


def test_ris_and_csl_json_name_the_cited_papers(home: Path) -> None:
    ris = quire(home, "ask", QUESTION, "--digest", "--ris", "--no-save")
    assert ris.returncode == 0, ris.stderr
    records = read_ris(ris.stdout)
    assert records and any(record["TI"][0].startswith("SPECTER") for record in records)
    assert all(record["TY"][0] in ("JOUR", "CPAPER", "GEN") for record in records)
    csl = quire(home, "ask", QUESTION, "--digest", "--csl-json", "--no-save")
    assert csl.returncode == 0, csl.stderr
    items = json.loads(csl.stdout)
    assert [item["title"] for item in items] == [record["TI"][0] for record in records]
