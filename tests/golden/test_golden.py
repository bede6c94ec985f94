"""The golden question set: well formed, and every expected paper exists in the shared data.

The questions about the bundled demo papers are answered end to end, citations checked, in
test_golden_answers.py; written answers with a capable model for all of them are
benchmarks/answers.py's job (minutes per question on a 2-core CPU).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

GOLDEN = json.loads((Path(__file__).with_name("questions.json")).read_text(encoding="utf-8"))


def test_twenty_questions_each_with_expected_papers() -> None:
    questions = GOLDEN["questions"]
    assert len(questions) == 20
    assert len({q["id"] for q in questions}) == 20
    for question in questions:
        assert question["question"].endswith("?") and question["expected"]
        assert question["source"] in ("library", "datastore")
    assert GOLDEN["off_topic"]


def test_expected_papers_exist(papers_dir: Path) -> None:
    for question in GOLDEN["questions"]:
        if question["source"] == "library":
            for name in question["expected"]:
                assert (papers_dir / name).is_file(), name


@pytest.mark.slow
def test_expected_datastore_records_exist(papers_dir: Path) -> None:
    datastore = papers_dir.parent.parent / "datastore" / "cs-sample.jsonl.gz"
    if not datastore.is_file():
        pytest.skip("the sample datastore is not here")
    wanted = {n for q in GOLDEN["questions"] if q["source"] == "datastore" for n in q["expected"]}
    with gzip.open(datastore, "rt", encoding="utf-8") as lines:
        found = {json.loads(line)["id"] for line in lines} & wanted
    assert found == wanted
