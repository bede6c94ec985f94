"""The whole app as a user drives it: drop real papers, wait for indexing, ask, click a citation, and
check the viewer shows the cited page with exactly the passage's stored rectangles highlighted.

The engine is real (ingest, hybrid retrieval with the bundled MiniLM embedder, citation checking);
answers come in digest mode (verbatim quotes grouped by theme) so the test does not wait minutes
for a language model. Query rewriting and reranking are off for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QTextCursor, QTextDocument
from PySide6.QtWidgets import QApplication, QFileDialog
from pytestqt.qtbot import QtBot

from engine.config import GenerationSettings, RetrievalSettings, Settings
from engine.service import Engine
from ui.answer_controller import export_file_name
from ui.answer_html import parse_cite_url
from ui.ask_pane import SELECTED
from ui.engine_client import EngineClient
from ui.main_window import MainWindow

pytestmark = pytest.mark.slow

PAPERS = ("N18-3011.pdf", "2020.acl-main.207.pdf", "2020.acl-main.447.pdf")
QUESTION = "How does SPECTER use citations to learn document embeddings?"
TIMEOUT_MS = 600_000
HOSTILE_TITLE = "Cite <script>alert(1)</script> & <b>Passages</b>"


@pytest.fixture
def fast_client(tmp_path: Path) -> Iterator[EngineClient]:
    settings = Settings(retrieval=RetrievalSettings(rewrite=False, reranker="none"),
                        generation=GenerationSettings(digest=True))
    engine_client = EngineClient(Engine(tmp_path / "home", settings=settings))
    yield engine_client
    engine_client.shutdown()


@pytest.fixture
def app_window(qtbot: QtBot, fast_client: EngineClient, tmp_path: Path, shown_errors: list[str]) -> MainWindow:
    window = MainWindow(fast_client, QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat),
                        progress_delay_ms=0)
    qtbot.addWidget(window)
    window.resize(1440, 880)
    window.show()
    qtbot.waitExposed(window)
    return window


def drop(window: MainWindow, paths: list[Path]) -> bool:
    """A file manager's drag and drop onto the middle of the window, through the native window."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path)) for path in paths])
    actions = Qt.DropAction.CopyAction | Qt.DropAction.MoveAction
    centre = QPointF(window.library.geometry().center())
    buttons, modifiers = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    try:
        enter = QDragEnterEvent(centre, actions, mime, buttons, modifiers)
    except TypeError:  # PySide6 before the QPointF overload
        enter = QDragEnterEvent(centre.toPoint(), actions, mime, buttons, modifiers)
    QApplication.sendEvent(window.windowHandle(), enter)
    dropped = QDropEvent(centre, actions, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window.windowHandle(), dropped)
    return enter.isAccepted() and dropped.isAccepted()


def ask(qtbot: QtBot, window: MainWindow, question: str) -> None:
    box = window.ask_pane.question_box
    box.setPlainText(question)
    window.activateWindow()
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Return)  # Enter asks, as in chat apps


def citation_links(window: MainWindow) -> list[tuple[str, int]]:
    """(href, position) of every citation link in the answer view, in reading order."""
    document: QTextDocument = window.ask_pane.answer_view.document()
    links: list[tuple[str, int]] = []
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            if fragment.isValid() and fragment.charFormat().anchorHref().startswith("quire://cite/"):
                links.append((fragment.charFormat().anchorHref(), fragment.position()))
            iterator += 1
        block = block.next()
    return links


def click_link(qtbot: QtBot, window: MainWindow, position: int) -> None:
    view = window.ask_pane.answer_view
    cursor = QTextCursor(view.document())
    cursor.setPosition(position + 1)
    view.setTextCursor(cursor)
    view.ensureCursorVisible()
    point = view.cursorRect(cursor).center()
    point.setX(point.x() - 3)  # inside the link's first character
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_drop_index_ask_and_open_a_citation_on_its_page(qtbot: QtBot, app_window: MainWindow,
                                                        fast_client: EngineClient, corpus_papers: Path,
                                                        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    window = app_window
    assert drop(window, [corpus_papers / name for name in PAPERS])
    qtbot.waitUntil(lambda: window.model.rowCount() == len(PAPERS) and not fast_client.ingesting, timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: not fast_client.busy, timeout=TIMEOUT_MS)  # background embedding done

    stages: list[str] = []
    fast_client.answer_stage.connect(stages.append)
    ask(qtbot, window, QUESTION)
    assert fast_client.asking and window.ask_pane.stage_row.isVisible() and window.cancel_action.isEnabled()
    qtbot.waitUntil(lambda: window.ask_pane.answer is not None, timeout=TIMEOUT_MS)
    answer = window.ask_pane.answer
    assert answer is not None and answer.references and "retrieving" in stages
    assert not window.ask_pane.stage_row.isVisible()
    links = citation_links(window)
    assert links, "the answer shows no clickable citations"

    # Click the first citation whose quote has boxes on the page, as a reader would.
    href, position = next((href, position) for href, position in links
                          if _citation(answer, href) is not None and _citation(answer, href).rects)
    n, _ = parse_cite_url(QUrl(href))
    click_link(qtbot, window, position)
    qtbot.waitUntil(lambda: bool(window.viewer.highlight_rects), timeout=60_000)

    reference, citation = answer.reference(n), _citation(answer, href)
    with Engine(fast_client.home) as engine:
        passage = engine.passage(reference.passage_id)
        document = engine.document(reference.doc_id)
    assert window.viewer.path == document.path
    assert window.viewer.current_page == citation.rects[0].page
    assert window.viewer.highlight_rects == passage.rects  # exactly the stored rectangles
    assert window.viewer.quote_rects == citation.rects
    drawn_passage, drawn_quote = window.viewer.visible_highlights()
    assert drawn_quote == [rect for page, rect in citation.rects if page == window.viewer.current_page]
    assert drawn_passage == [rect for page, rect in passage.rects if page == window.viewer.current_page]
    assert window.viewer.scroll_area.isVisible()

    # The answer is kept and listed under past questions.
    qtbot.waitUntil(lambda: window.ask_pane.history.list.count() == 1, timeout=60_000)
    assert window.ask_pane.history.list.item(0).text().splitlines()[0] == QUESTION
    assert "Everything" in window.ask_pane.history.list.item(0).text().splitlines()[1]  # the scope it was asked in

    # Export to Markdown writes the answer with its references (the save dialog is beside the point).
    target = tmp_path / "answer.md"
    suggested: list[str] = []

    def save_as(_parent: object, _caption: str, name: str, _filter: str) -> tuple[str, str]:
        suggested.append(name)
        return str(target), ""
    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_as)
    window.ask_pane.markdown_button.click()
    qtbot.waitUntil(target.exists, timeout=60_000)
    assert reference.bib.title.split()[0] in target.read_text(encoding="utf-8")
    assert Path(suggested[0]).name == export_file_name(QUESTION, ".md") != "answer.md"  # named after the question


def test_selected_papers_scope_and_hostile_titles(qtbot: QtBot, app_window: MainWindow, fast_client: EngineClient,
                                                  corpus_papers: Path, titled_pdf: Callable[[str], Path]) -> None:
    window = app_window
    hostile = titled_pdf(HOSTILE_TITLE)
    window.add_paths([hostile, corpus_papers / PAPERS[0]])
    qtbot.waitUntil(lambda: window.model.rowCount() == 2 and not fast_client.busy, timeout=TIMEOUT_MS)

    row = next(r for r in range(window.table.model().rowCount())
               if window.table.model().index(r, 0).data() == HOSTILE_TITLE)
    window.table.selectRow(row)
    assert HOSTILE_TITLE in window.library.details.toPlainText()
    selected = window.selected_doc_ids()
    window.ask_pane.scope_box.setCurrentIndex(window.ask_pane.scope_box.findData(SELECTED))
    ask(qtbot, window, "Why should retrieval systems cite the passages they rely on?")
    qtbot.waitUntil(lambda: window.ask_pane.answer is not None, timeout=TIMEOUT_MS)

    answer = window.ask_pane.answer
    assert answer is not None and answer.references
    assert {reference.doc_id for reference in answer.references} == set(selected)
    shown = window.ask_pane.answer_view.toPlainText()
    assert HOSTILE_TITLE in shown  # the title as typed: tags shown, never run
    assert "<script>" not in window.ask_pane.answer_view.toHtml().replace("&lt;script&gt;", "")


def _citation(answer, href: str):
    parsed = parse_cite_url(QUrl(href))
    if parsed is None:
        return None
    n, sentence = parsed
    if sentence is None or not 0 <= sentence < len(answer.sentences):
        return None
    return next((c for c in answer.sentences[sentence].citations if c.n == n), None)


def test_esc_cancels_a_question_and_the_pane_is_ready_again(qtbot: QtBot, app_window: MainWindow,
                                                           fast_client: EngineClient, corpus_papers: Path,
                                                           shown_errors: list[str]) -> None:
    window = app_window
    window.add_paths([corpus_papers / PAPERS[1]])
    ask(qtbot, window, QUESTION)  # queued behind the paper being added
    assert fast_client.asking and window.cancel_action.isEnabled()
    assert window.ask_pane.stage_label.full_text.startswith("Searching your papers…")

    qtbot.keyClick(window.ask_pane.question_box, Qt.Key.Key_Escape)

    qtbot.waitUntil(lambda: not fast_client.busy, timeout=TIMEOUT_MS)
    answer = window.ask_pane.answer
    assert answer is None or answer.cancelled
    assert not window.ask_pane.stage_row.isVisible() and window.ask_pane.ask_button.isEnabled()
    assert not window.cancel_action.isEnabled()
    shown = window.ask_pane.answer_view.toPlainText()
    assert "Searching your papers" not in shown  # never left showing a stage that is over
    if answer is None:
        assert "Stopped" in shown and not window.ask_pane.markdown_button.isEnabled()
