"""The answer as shown: clickable citations, marked unsupported sentences, references, and paper or
model text with markup shown literally."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QAction, QGuiApplication, QTextDocument
from pytestqt.qtbot import QtBot

from engine.bibliography import Bibliography
from engine.render.common import papers_of
from engine.types import Answer, AnswerMode, AnswerSentence, Citation, Reference
from ui.answer_controller import citation_for
from ui.answer_html import answer_html, cite_url, parse_cite_url, reference_line
from ui.ask_pane import AskPane

HOSTILE_TITLE = "Robust <script>alert('x')</script> Retrieval & <b>Bold</b> Claims"


def _answer() -> Answer:
    references = (
        Reference(1, "d1-0001", "d1", "library",
                  Bibliography(HOSTILE_TITLE, authors=("Ann <i>Lee</i>", "Bo Chen"), year=2021), "Passage one text.",
                  page=3),
        Reference(2, "ds-7", "ds", "cs-sample", Bibliography("A datastore paper", url="https://example.org/x"),
                  "Record text."),
    )
    sentences = (
        AnswerSentence("Dense retrieval helps <em>recall</em> [1].",
                       (Citation(1, "d1-0001", "Passage one", 0, 11, 0.9),), supported=True),
        AnswerSentence("It also cures every disease [2, 1].",
                       (Citation(2, "ds-7", "Record", 0, 6, 0.1), Citation(1, "d1-0001", "text", 13, 17, 0.2)),
                       supported=False),
    )
    return Answer("Does <b>dense</b> retrieval help?", " ".join(s.text for s in sentences), sentences, references,
                  AnswerMode.WRITTEN, id="a1")


def _rendered(markup: str) -> QTextDocument:
    document = QTextDocument()
    document.setHtml(markup)
    return document


def test_citations_become_links_that_name_the_reference_and_sentence() -> None:
    markup = answer_html(_answer())
    assert f'href="{cite_url(1, 0)}"' in markup
    assert f'href="{cite_url(2, 1)}"' in markup and f'href="{cite_url(1, 1)}"' in markup
    assert parse_cite_url(QUrl(cite_url(2, 1))) == (2, 1)
    assert parse_cite_url(QUrl(cite_url(3))) == (3, None)
    assert parse_cite_url(QUrl("https://example.org/cite/1")) is None


def test_paper_and_model_text_with_markup_is_shown_literally() -> None:
    answer = _answer()
    markup = answer_html(answer)
    assert "<script>" not in markup and "<em>" not in markup and "<i>Lee" not in markup
    text = _rendered(markup).toPlainText()
    assert HOSTILE_TITLE in text
    assert "Dense retrieval helps <em>recall</em> [1]." in text
    assert "<i>Lee</i> and Chen 2021" in text  # surnames in the byline, markup and all


def test_unsupported_sentences_are_marked_and_explained() -> None:
    markup = answer_html(_answer())
    assert markup.count('title="Not confirmed: no passage read says this') == 1
    assert "Marked sentences" in markup and "not confirmed" in markup


def test_three_support_levels_are_visible_and_explained_on_hover() -> None:
    base = _answer()
    levels = ("supported", "partial", "contradicted")
    sentences = tuple(replace(sentence, supported=level != "contradicted", support=level)
                      for sentence, level in zip((*base.sentences, base.sentences[0]), levels, strict=True))
    markup = answer_html(replace(base, sentences=sentences))
    assert markup.count('title="Partly supported') == 1 and markup.count('title="Contradicted') == 1
    assert "Not confirmed" not in markup  # the supported sentence is plain
    assert "partly supported" in markup and "contradicted by a source" in markup  # the legend


def test_references_list_one_line_per_paper_with_its_pages() -> None:
    first, second = papers_of(_answer())
    assert reference_line(first) == f"<i>Lee</i> and Chen 2021, {HOSTILE_TITLE}. p. 3"
    assert reference_line(second) == "A datastore paper. [cs-sample]. https://example.org/x"


def test_the_clicked_sentence_decides_which_quote_is_highlighted() -> None:
    answer = _answer()
    first_sentence_quote = citation_for(answer, 1, 0)
    second_sentence_quote = citation_for(answer, 1, 1)
    assert first_sentence_quote is not None and first_sentence_quote.quote == "Passage one"
    assert second_sentence_quote is not None and second_sentence_quote.quote == "text"
    from_references = citation_for(answer, 1, -1)
    assert from_references is not None and from_references.support == 0.9  # the strongest


def test_the_pane_streams_then_shows_the_answer_and_copies_rich_text(qtbot: QtBot) -> None:
    pane = AskPane(QAction("Ask"))
    qtbot.addWidget(pane)
    pane.start_answer("Does <b>dense</b> retrieval help?")
    assert pane.stage_row.isVisibleTo(pane) and not pane.ask_button.isEnabled()
    pane.set_stage("drafting")
    assert pane.stage_label.full_text.startswith("Reading the passages…")  # no token yet: the model reads
    pane.append_token("Dense <b>retrieval</b> ")
    qtbot.waitUntil(lambda: "Dense <b>retrieval</b>" in pane.answer_view.toPlainText())

    with qtbot.waitSignal(pane.citation_activated) as clicked:
        pane.show_answer(_answer())
        pane.answer_view.anchorClicked.emit(QUrl(cite_url(2, 1)))
    assert clicked.args == [2, 1]
    assert not pane.stage_row.isVisibleTo(pane) and pane.ask_button.isEnabled()
    assert "Does <b>dense</b> retrieval help?" in pane.answer_view.toPlainText()
    assert pane.copy_button.isEnabled()

    pane.copy_rich_text()
    copied = QGuiApplication.clipboard().mimeData()
    assert copied.hasHtml() and HOSTILE_TITLE in _rendered(copied.html()).toPlainText()


def test_past_questions_are_listed_as_plain_text_with_their_status(qtbot: QtBot) -> None:
    pane = AskPane(QAction("Ask"))
    qtbot.addWidget(pane)
    pane.set_history([_answer()])
    first = pane.history.list.item(0)
    assert first.text().splitlines()[0] == "Does <b>dense</b> retrieval help?"
    assert first.text().splitlines()[1].endswith("Answered")
    with qtbot.waitSignal(pane.history_activated) as opened:
        pane.history.list.itemActivated.emit(first)
    assert opened.args == ["a1"]


def test_enter_asks_and_shift_enter_starts_a_new_line(qtbot: QtBot) -> None:
    action = QAction("Ask")
    asked: list[bool] = []
    action.triggered.connect(lambda: asked.append(True))
    pane = AskPane(action)
    qtbot.addWidget(pane)
    pane.show()
    pane.question_box.setFocus()
    qtbot.keyClicks(pane.question_box, "first line")
    qtbot.keyClick(pane.question_box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(pane.question_box, "second line")
    assert pane.question_box.toPlainText() == "first line\nsecond line" and not asked
    qtbot.keyClick(pane.question_box, Qt.Key.Key_Return)
    assert asked == [True] and pane.question_box.toPlainText() == "first line\nsecond line"


def test_a_spelling_correction_is_still_named_in_the_final_answer(qtbot: QtBot) -> None:
    pane = AskPane(QAction("Ask"))
    qtbot.addWidget(pane)
    pane.start_answer("What is optomechnical cooling?")
    pane.set_stage("also searching for 'optomechanical' (typed 'optomechnical')")
    pane.set_stage("verifying")
    pane.show_answer(_answer())
    assert "Also searching for 'optomechanical' (typed 'optomechnical')." in pane.answer_view.toPlainText()
