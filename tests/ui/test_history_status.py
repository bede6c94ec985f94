"""The history says how each question ended: a digest given instead of the written answer asked
for, and a cancelled run, are never listed as answered."""

from __future__ import annotations

from pathlib import Path

from engine.service import Engine
from engine.store.answers import save_answer
from engine.types import Answer, AnswerMode, AnswerSentence
from ui.history_list import summary_line


def _answer(answer_id: str, mode: AnswerMode, asked: str, *, cancelled: bool = False) -> Answer:
    sentence = AnswerSentence("SPECTER is trained on citation triplets.", needs_citation=False, supported=True)
    return Answer(question=f"Question {answer_id}?", text=sentence.text, sentences=(sentence,), references=(),
                  mode=mode, cancelled=cancelled, id=answer_id, created_at=float(len(answer_id)),
                  settings=(("mode", asked), ("scope", "Library only")))


def test_fallbacks_and_cancels_are_listed_as_what_they_were(tmp_path: Path) -> None:
    with Engine(tmp_path / "home") as engine:
        save_answer(engine.library, _answer("a", AnswerMode.DIGEST, "write"))
        save_answer(engine.library, _answer("bb", AnswerMode.WRITTEN, "write", cancelled=True))
        save_answer(engine.library, _answer("ccc", AnswerMode.WRITTEN, "write"))
        save_answer(engine.library, _answer("dddd", AnswerMode.DIGEST, "digest"))
        lines = {past.id: summary_line(past) for past in engine.answers()}
    assert lines["a"].endswith("Evidence digest instead of a written answer")
    assert lines["bb"].endswith("Cancelled (partial)")
    assert lines["ccc"].endswith("Answered")
    assert lines["dddd"].endswith("Evidence digest")
    assert all("Library only" in line for line in lines.values())
