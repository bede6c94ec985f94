"""A past question asked in Chinese keeps its date and mode line in the Past questions list: its
row is as tall as the two lines it shows, as an English one's is."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from engine.service import Engine
from engine.store.answers import save_answer
from engine.types import Answer, AnswerMode, AnswerSentence
from ui.history_list import HistoryList


def _answer(answer_id: str, question: str) -> Answer:
    sentence = AnswerSentence("SPECTER is trained on citation triplets.", needs_citation=False, supported=True)
    return Answer(question=question, text=sentence.text, sentences=(sentence,), references=(),
                  mode=AnswerMode.WRITTEN, id=answer_id, created_at=1_800_000_000.0,
                  settings=(("mode", "write"), ("scope", "Library only")))


def test_a_chinese_question_keeps_its_summary_line(qtbot: QtBot, tmp_path: Path) -> None:
    with Engine(tmp_path / "home") as engine:
        save_answer(engine.library, _answer("zh", "SPECTER 是如何训练的？"))
        save_answer(engine.library, _answer("en", "How is SPECTER trained?"))
        entries = engine.answers()
    history = HistoryList()
    qtbot.addWidget(history)
    history.resize(343, 400)
    history.show()
    history.set_entries(entries)
    qtbot.wait(10)
    line = history.list.fontMetrics().lineSpacing()
    for row in range(history.list.count()):
        item = history.list.item(row)
        assert "Library only" in item.text().splitlines()[1]
        # Two lines: the question and its date and mode line.
        assert history.list.visualItemRect(item).height() >= 2 * line
