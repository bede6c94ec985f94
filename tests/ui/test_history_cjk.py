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


def _has_cjk_font() -> bool:
    from PySide6.QtGui import QFontDatabase

    return any("CJK" in family or "WenQuanYi" in family for family in QFontDatabase.families())


def test_a_chinese_questions_date_line_is_painted_not_elided(qtbot: QtBot, tmp_path: Path) -> None:
    """With a CJK font installed (the fallback that paints Chinese), the row's lower line has ink: the view
    does not elide the row after the question for want of the fallback font's few extra pixels."""
    import pytest
    from PySide6.QtGui import QColor

    history = HistoryList()
    qtbot.addWidget(history)
    if not _has_cjk_font():
        pytest.skip("no CJK font installed (Debian: fonts-noto-cjk): Chinese is not painted at all")
    with Engine(tmp_path / "home") as engine:
        save_answer(engine.library, _answer("zh", "图注意力网络如何对节点的邻居进行加权？"))
        entries = engine.answers()
    history.resize(343, 400)
    history.show()
    history.set_entries(entries)
    qtbot.wait(10)
    rect = history.list.visualItemRect(history.list.item(0))
    image = history.list.viewport().grab().toImage()
    # The lower half of the row's last line (where the date's letters sit), inside its frame (a selected
    # row is outlined).
    line = history.list.fontMetrics().lineSpacing()
    lower = range(rect.bottom() - line // 2, rect.bottom() - 2)
    across = range(rect.left() + 4, rect.right() - 4)
    ink = sum(QColor(image.pixel(x, y)).lightness() < 128 for y in lower for x in across)
    assert ink > 50, f"the date and mode line was not painted ({ink} dark pixels)"
