"""What a researcher does around answers: past questions (open, delete, marked cancelled), a removed paper's
quote, scope remembered, the empty library and "nothing relevant" naming the scope, editing a paper's
details, importing from Zotero, and a Cancel that frees the pane at once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures.ris import read_ris
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog, QFileDialog
from pytestqt.qtbot import QtBot

from engine.bibliography import Bibliography
from engine.service import Engine
from engine.store.answers import save_answer
from engine.types import Answer, AnswerMode, AnswerSentence, Citation, Reference
from ui import main_window as main_window_module
from ui import reference_export
from ui.answer_controller import EMPTY_LIBRARY, nothing_relevant_text
from ui.ask_pane import LIBRARY, SELECTED
from ui.engine_client import EngineClient
from ui.engine_tasks import locate_passage
from ui.main_window import MainWindow

TIMEOUT_MS = 60_000


def _past(answer_id: str, question: str, *, cancelled: bool = False, doc_id: str = "d", passage: str = "d-0000",
          created_at: float = 1_700_000_000.0) -> Answer:
    reference = Reference(1, passage, doc_id, "library", Bibliography("A paper"), "Quoted words from the paper.",
                          page=2)
    sentence = AnswerSentence("A claim [1].", (Citation(1, passage, "Quoted words", 0, 12, 0.9),), True,
                              support="supported")
    return Answer(question, sentence.text, (sentence,), (reference,), AnswerMode.WRITTEN, cancelled=cancelled,
                  id=answer_id, created_at=created_at, model="/models/SmolLM2-135M.gguf",
                  settings=(("scope", "Library only"),))


def test_past_questions_open_on_the_answer_tab_and_can_be_deleted(
        qtbot: QtBot, window: MainWindow, client: EngineClient) -> None:
    with Engine(client.home) as engine:
        save_answer(engine.library, _past("a1", "What does SPECTER do?"))
        save_answer(engine.library, _past("a2", "Stopped halfway?", cancelled=True, created_at=1_700_000_100.0))
    window.answers.refresh_history()
    history = window.ask_pane.history
    qtbot.waitUntil(lambda: history.list.count() == 2, timeout=TIMEOUT_MS)
    lines = [history.list.item(row).text().splitlines() for row in range(2)]
    assert lines[0][0] == "Stopped halfway?" and lines[0][1].endswith("Cancelled (partial)")
    assert "Library only" in lines[1][1] and "SmolLM2-135M" in lines[1][1] and lines[1][1].endswith("Answered")

    window.ask_pane.tabs.setCurrentWidget(history)
    window.ask_pane.question_box.setPlainText("another question")
    history.select("a1")
    history.open_button.click()
    qtbot.waitUntil(lambda: window.ask_pane.answer is not None, timeout=TIMEOUT_MS)
    assert window.ask_pane.tabs.currentWidget() is window.ask_pane.answer_view  # switched to the answer
    assert window.ask_pane.question_box.toPlainText() == "What does SPECTER do?"

    history.select("a1")
    history.delete_button.click()
    qtbot.waitUntil(lambda: history.ids() == ["a2"], timeout=TIMEOUT_MS)
    assert window.ask_pane.answer is None  # the deleted answer is no longer shown
    with Engine(client.home) as engine:
        assert [summary.id for summary in engine.answers()] == ["a2"]


def test_a_citation_of_a_removed_paper_shows_its_saved_quote(qtbot: QtBot, window: MainWindow,
                                                             client: EngineClient) -> None:
    answer = _past("a3", "Q?", doc_id="gone", passage="gone-0001")
    with Engine(client.home) as engine:
        location = locate_passage(engine, reference=answer.references[0], citation=answer.sentences[0].citations[0])
    assert location.removed and location.quote == "Quoted words" and not location.path
    window.answers.show(answer)
    window.answers.open_citation(1, 0)
    qtbot.waitUntil(lambda: window.viewer.stack.currentWidget() is window.viewer.record_view, timeout=TIMEOUT_MS)
    shown = window.viewer.record_view.toPlainText()
    assert "removed from your library" in shown and "Quoted words from the paper." in shown
    assert "No passage with id" not in shown


def test_scope_and_written_answer_are_remembered(qtbot: QtBot, client: EngineClient,
                                                 window_settings: QSettings) -> None:
    first = MainWindow(client, window_settings, background_embedding=False)
    qtbot.addWidget(first)
    first.ask_pane.set_scope(LIBRARY)
    first.ask_pane.write_box.setChecked(True)
    first.close()
    again = MainWindow(client, window_settings, background_embedding=False)
    qtbot.addWidget(again)
    assert again.ask_pane.scope() == LIBRARY and again.ask_pane.write_box.isChecked()


def test_an_empty_library_says_add_pdfs_first(qtbot: QtBot, window: MainWindow, client: EngineClient) -> None:
    qtbot.waitUntil(lambda: not client.busy, timeout=TIMEOUT_MS)
    window.ask_pane.question_box.setPlainText("What is SPECTER?")
    window.ask_action.trigger()
    assert not client.asking
    assert EMPTY_LIBRARY in window.ask_pane.answer_view.toPlainText()
    assert "add PDFs first" in EMPTY_LIBRARY


def test_nothing_relevant_names_the_scope() -> None:
    assert "the selected paper " in nothing_relevant_text(SELECTED, 1, True)
    assert "the 3 selected papers" in nothing_relevant_text(SELECTED, 3, False)
    assert "in your library addresses" in nothing_relevant_text(LIBRARY, 0, True)
    assert "your library or the attached datastores" in nothing_relevant_text("everything", 0, True)
    assert "wider scope" in nothing_relevant_text(SELECTED, 2, False)


def test_details_are_edited_from_the_details_pane(qtbot: QtBot, window: MainWindow, client: EngineClient,
                                                  titled_pdf: Callable[[str], Path], monkeypatch: Any) -> None:
    window.add_paths([titled_pdf("End User C")])
    qtbot.waitUntil(lambda: window.model.rowCount() == 1 and not client.ingesting, timeout=TIMEOUT_MS)
    window.table.selectRow(0)
    assert window.edit_action.isEnabled()

    class Filled(main_window_module.MetadataDialog):
        def exec(self) -> int:
            self.title_edit.setText("MapReduce: Simplified Data Processing on Large Clusters")
            self.authors_edit.setPlainText("Jeffrey Dean\nSanjay Ghemawat")
            self.year_edit.setText("2004")
            self.venue_edit.setText("OSDI")
            return QDialog.DialogCode.Accepted
    monkeypatch.setattr(main_window_module, "MetadataDialog", Filled)
    window.library.details.edit_requested.emit(window.selected_doc_ids()[0])  # the "Edit details…" link
    qtbot.waitUntil(lambda: window.model.document(0).bib.year == 2004, timeout=TIMEOUT_MS)
    document = window.model.document(0)
    assert document.bib.title.startswith("MapReduce") and document.bib.authors == ("Jeffrey Dean", "Sanjay Ghemawat")
    assert document.bib.venue == "OSDI"


def test_the_library_exports_its_references_in_the_chosen_format(qtbot: QtBot, window: MainWindow,
                                                                  client: EngineClient, tmp_path: Path,
                                                                  titled_pdf: Callable[[str], Path],
                                                                  monkeypatch: Any) -> None:
    window.add_paths([titled_pdf("End User C")])
    qtbot.waitUntil(lambda: window.model.rowCount() == 1 and not client.ingesting, timeout=TIMEOUT_MS)
    doc_id = window.model.document(0).id
    saved: list[object] = []
    client.update_metadata(doc_id, saved.append, title="MapReduce", authors=["Jeffrey Dean"], year=2004,
                           venue="OSDI")
    qtbot.waitUntil(lambda: bool(saved), timeout=TIMEOUT_MS)
    target = tmp_path / "mine"  # no suffix typed: the chosen filter decides the format and adds its suffix
    ris_filter = next(name for name in reference_export.FILTERS if name.startswith("RIS"))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args, **kwargs: (str(target), ris_filter))
    window.export_action.trigger()
    written = tmp_path / "mine.ris"
    qtbot.waitUntil(written.exists, timeout=TIMEOUT_MS)
    (record,) = read_ris(written.read_text(encoding="utf-8"))
    assert record["TY"] == ["CPAPER"] and record["T2"] == ["OSDI"]  # a conference: its proceedings
    assert record["TI"] == ["MapReduce"] and record["AU"] == ["Dean, Jeffrey"]


def test_cancel_frees_the_pane_at_once_and_a_new_question_can_be_asked(
        qtbot: QtBot, window: MainWindow, client: EngineClient, titled_pdf: Callable[[str], Path]) -> None:
    window.add_paths([titled_pdf("Retrieval systems should cite passages")])
    window.ask_pane.question_box.setPlainText("Why should retrieval systems cite passages?")
    window.ask_action.trigger()  # queued behind the paper being added
    assert client.asking and window.ask_pane.stage_row.isVisible()
    window.cancel_action.trigger()
    # At once, whatever the engine is doing: the pane says so and takes a new question.
    assert not window.ask_pane.stage_row.isVisible() and window.ask_pane.ask_button.isEnabled()
    assert window.ask_pane.answer_view.toPlainText().count("Stopped") == 1
    assert not window.ask_pane.markdown_button.isEnabled()
    window.ask_pane.question_box.setPlainText("What should retrieval systems cite?")
    window.ask_action.trigger()
    assert window.ask_pane.stage_row.isVisible()
    qtbot.waitUntil(lambda: not client.busy, timeout=300_000)
    assert window.ask_pane.answer is not None
    assert window.ask_pane.answer.question == "What should retrieval systems cite?"


def test_importing_a_folder_that_is_not_zotero_says_where_zotero_keeps_its_data(
        qtbot: QtBot, window: MainWindow, client: EngineClient, tmp_path: Path, shown_errors: list[str]) -> None:
    window.import_zotero(str(tmp_path))
    qtbot.waitUntil(lambda: bool(shown_errors), timeout=TIMEOUT_MS)
    assert "not a Zotero data folder" in shown_errors[0] and "zotero.sqlite" in shown_errors[0]
    shown_errors.clear()


def test_check_a_claim_lists_passages_that_open_on_their_quote(
        qtbot: QtBot, window: MainWindow, client: EngineClient, titled_pdf: Callable[[str], Path]) -> None:
    window.add_paths([titled_pdf("Why retrieval systems cite passages")])
    qtbot.waitUntil(lambda: window.model.rowCount() == 1 and not client.busy, timeout=300_000)
    window.answers.check_claim("Retrieval systems should cite the passages they rely on.")
    qtbot.waitUntil(lambda: not client.busy and "Supporting passages" in window.ask_pane.answer_view.toPlainText(),
                    timeout=300_000)
    shown = window.ask_pane.answer_view.toPlainText()
    assert "Checking: Retrieval systems should cite the passages they rely on." in shown
    supporting = [i for i, p in enumerate(window.answers.checked) if p.verdict in ("supported", "partial")]
    assert supporting, shown  # the paper says it in as many words
    window.ask_pane.check_passage_activated.emit(supporting[0])
    qtbot.waitUntil(lambda: bool(window.viewer.quote_rects), timeout=TIMEOUT_MS)
    assert window.viewer.current_page == 1


@pytest.mark.slow
def test_a_table_of_a_real_paper_exports_its_rows_as_csv(qtbot: QtBot, window: MainWindow, client: EngineClient,
                                                         corpus_papers: Path, tmp_path: Path, monkeypatch: Any) -> None:
    window.add_paths([corpus_papers / "2020.acl-main.207.pdf"])
    qtbot.waitUntil(lambda: window.model.rowCount() == 1 and not client.ingesting, timeout=300_000)
    window.ask_pane.question_box.setPlainText("How does SPECTER use citations?")
    window.table_action.trigger()
    tables = window.tables
    qtbot.waitUntil(lambda: tables.table is not None, timeout=600_000)
    assert tables.window.model.rowCount() == 1 and tables.window.csv_button.isEnabled()
    target = tmp_path / "table.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args, **kwargs: (str(target), ""))
    tables.window.csv_button.click()
    header = target.read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("paper,authors,year,Answer,Answer quote,Answer page")
