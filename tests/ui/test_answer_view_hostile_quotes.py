"""The app's answer view (not only the exports) showing quotes of a PDF that holds `<script>` and
`javascript:` text: a real paper is added and asked about in the window, and the answer's quotes are
shown as the paper's words, with no script, no image and no link but the app's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.pdfs import text_pdf
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QTextDocument
from pytestqt.qtbot import QtBot

from engine.config import GenerationSettings, RetrievalSettings, Settings
from engine.service import Engine
from ui.engine_client import EngineClient
from ui.main_window import MainWindow

pytestmark = pytest.mark.slow  # ingest and a real digest answer

TIMEOUT_MS = 600_000
# One sentence over four printed lines (the page does not wrap them).
HOSTILE = ("Citation checking compares every quote with its source\n<script>alert('owned')</script> and never "
           "follows a\njavascript:alert(document.cookie) link or loads\n<img src=x onerror=alert(2)> from a paper.")


@pytest.fixture
def digest_window(qtbot: QtBot, tmp_path: Path, shown_errors: list[str]) -> Iterator[MainWindow]:
    settings = Settings(retrieval=RetrievalSettings(rewrite=False, reranker="none"),
                        generation=GenerationSettings(digest=True))
    client = EngineClient(Engine(tmp_path / "home", settings=settings))
    window = MainWindow(client, QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat),
                        progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    yield window
    client.shutdown()


def anchors(document: QTextDocument) -> list[str]:
    found = []
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            if fragment.isValid() and fragment.charFormat().isAnchor():
                found.append(fragment.charFormat().anchorHref())
            iterator += 1
        block = block.next()
    return found


def test_quotes_of_script_and_javascript_text_are_shown_as_text(qtbot: QtBot, digest_window: MainWindow,
                                                                tmp_path: Path) -> None:
    window = digest_window
    paper = text_pdf(tmp_path / "hostile.pdf", [
        "How citation checking works\n\n" + HOSTILE + "\nA second sentence says that checked citations keep "
        "their verbatim quotes.\nRetrieval finds the passages first; the reader then picks the sentence."])
    window.add_paths([paper])
    qtbot.waitUntil(lambda: window.model.rowCount() == 1 and not window._client.ingesting, timeout=TIMEOUT_MS)

    window.ask_pane.question_box.setPlainText("How does citation checking compare quotes with their source?")
    window.ask_pane.question_box.setFocus()
    qtbot.keyClick(window.ask_pane.question_box, Qt.Key.Key_Return)
    view = window.ask_pane.answer_view
    qtbot.waitUntil(lambda: "alert('owned')" in view.toPlainText() and not window._client.asking,
                    timeout=TIMEOUT_MS)

    shown = view.toPlainText()
    assert "<script>alert('owned')</script>" in shown and "javascript:alert(document.cookie)" in shown, shown
    assert "<img src=x onerror=alert(2)>" in shown, shown
    html = view.toHtml().lower()
    assert "<script" not in html and "<img" not in html  # the tags are there as text: &lt;script&gt;
    assert all(href.startswith("quire://") for href in anchors(view.document())), anchors(view.document())
    assert not view.document().allFormats() or all(
        not fmt.isImageFormat() for fmt in view.document().allFormats())
