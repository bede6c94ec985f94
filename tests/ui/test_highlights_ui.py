"""Save highlights to PDFs… in the app: a real answer's quotes written into a copy of its paper."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pymupdf
import pytest
from fixtures.pdfs import text_pdf
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from engine.request import AskRequest, RequestOptions
from engine.service import Engine
from ui import highlights_export
from ui.engine_client import EngineClient
from ui.main_window import MainWindow

pytestmark = pytest.mark.slow  # a real digest answer (the answer reader and MiniLM) and a window


def test_save_highlights_writes_a_copy_and_says_so(qtbot: QtBot, tmp_path: Path, window_settings: QSettings,
                                                    shown_errors: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    paper = text_pdf(tmp_path / "reefs.pdf", ["Coral bleaching.\nCoral reefs bleach when ocean water stays too warm "
                                              "for weeks.\nBleached corals expel the algae that feed them."])
    before = hashlib.sha256(paper.read_bytes()).hexdigest()
    with Engine(tmp_path / "home") as engine:
        list(engine.add_documents([paper]))
        answer = engine.ask(AskRequest("Why do corals bleach?", mode="digest",
                                       options=RequestOptions(rewrite=False, feedback=False)))
    quotes = sum(len(s.citations) for s in answer.sentences)
    assert quotes
    client = EngineClient(Engine(tmp_path / "home"))
    window = MainWindow(client, window_settings, progress_delay_ms=0, background_embedding=False)
    qtbot.addWidget(window)
    monkeypatch.setattr(highlights_export, "ask_where", lambda parent: highlights_export.COPIES)
    try:
        window.answers.show(answer)
        assert window.ask_pane.highlights_button.isEnabled()
        window.ask_pane.highlights_button.click()
        copy = tmp_path / "reefs.quire.pdf"
        qtbot.waitUntil(lambda: "highlights in reefs.quire.pdf" in window.statusBar().currentMessage(),
                        timeout=60_000)
        with pymupdf.open(copy) as document:
            notes = [a.info["content"] for a in document[0].annots([pymupdf.PDF_ANNOT_HIGHLIGHT])]
        assert len(notes) == len({(c.passage_id, c.quote_start) for s in answer.sentences for c in s.citations})
        assert all(note.startswith("Why do corals bleach?") for note in notes)
        assert hashlib.sha256(paper.read_bytes()).hexdigest() == before
    finally:
        window.close()
        client.shutdown()
