"""Answers users already have saved still load, and save and export exactly as they did.

The files in ``tests/data/saved_answer`` were written by an earlier version of Quire (the answer
record as ``quire answers show --json`` prints it, and every export of it). Never regenerate them:
they stand for the answers in users' catalogs, so a change to the record or the exports shows up
here as a difference instead of silently altering what users get.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.render.exports import export_answer
from engine.render.html import to_html
from engine.render.markdown import to_markdown
from engine.store.record import answer_from_dict, answer_to_dict
from engine.types import Answer

SAVED = Path(__file__).resolve().parents[1] / "data" / "saved_answer"


def _record_text(record: dict[str, object]) -> str:
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def _saved() -> Answer:
    return answer_from_dict(json.loads((SAVED / "answer.json").read_text(encoding="utf-8")))


def test_a_saved_answer_loads_and_saves_byte_for_byte() -> None:
    saved = (SAVED / "answer.json").read_text(encoding="utf-8")
    assert _record_text(answer_to_dict(answer_from_dict(json.loads(saved)))) == saved


def test_the_catalog_form_of_a_saved_answer_is_unchanged() -> None:
    saved = json.loads((SAVED / "answer.json").read_text(encoding="utf-8"))
    # What the catalog stores: one line, no indent.
    assert json.dumps(answer_to_dict(answer_from_dict(saved)), ensure_ascii=False) == json.dumps(saved,
                                                                                                  ensure_ascii=False)


@pytest.mark.parametrize(("name", "render"), [
    ("answer.md", to_markdown),
    ("answer.html", to_html),
    ("answer.bib", lambda answer: export_answer(answer, "bibtex")),
    ("answer.ris", lambda answer: export_answer(answer, "ris")),
    ("answer.csl.json", lambda answer: export_answer(answer, "csl-json")),
])
def test_a_saved_answer_exports_as_it_did(name: str, render: object) -> None:
    assert callable(render)
    assert render(_saved()) == (SAVED / name).read_text(encoding="utf-8")


def test_an_answer_saved_before_paper_lists_and_verdicts_still_loads() -> None:
    older = json.loads((SAVED / "older.json").read_text(encoding="utf-8"))
    answer = answer_from_dict(older)
    assert _record_text(answer_to_dict(answer)) == (SAVED / "older.resaved.json").read_text(encoding="utf-8")
    assert to_markdown(answer) == (SAVED / "older.md").read_text(encoding="utf-8")
