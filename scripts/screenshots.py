"""Capture the desktop app's main states into docs/screenshots/ (run under Xvfb, or offscreen).

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/screenshots.py --digest

States: the empty library, papers being indexed, an answer with citations, the viewer zoomed on the
cited quote, the answer's references grouped by paper, a table of papers, an answer picturing the figure
its quote names, and (with ``--writer
MODEL.gguf``) a written answer while it is drafted, its progress showing; the window is 1366x768.
The answer with its cited quote is also shot in a 1024x700 and a 1920x1080 window.
Everything is real: a temporary library, the shared corpus papers (or
the bundled demo papers), the real engine answering a real question.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QCoreApplication, QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from desktop.app import application  # noqa: E402
from engine.demo import demo_papers  # noqa: E402
from engine.service import Engine  # noqa: E402
from ui.engine_client import EngineClient  # noqa: E402
from ui.main_window import MainWindow  # noqa: E402
from ui.theme import apply_theme  # noqa: E402

CORPUS = Path(os.environ.get("QUIRE_TEST_CORPUS", ROOT.parent / "shared" / "corpus")) / "papers"
QUESTION = "How are citation graphs and paper embeddings used to represent scientific documents?"
TABLE_QUESTION = "How are scientific documents represented for retrieval?"
FIGURE_QUESTION = "What does the distribution of papers across fields in S2ORC look like?"
SIZE = (1366, 768)  # the most common laptop screen
OTHER_SIZES = {"08-narrow-1024.png": (1024, 700), "09-wide-1920.png": (1920, 1080)}  # a small laptop, a desktop


def pump(milliseconds: int) -> None:
    loop = QEventLoop()
    QTimer.singleShot(milliseconds, loop.quit)
    loop.exec()


def wait_until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"screenshots: timed out waiting for {what}")
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        time.sleep(0.01)


def save(window: QWidget, out: Path, name: str) -> None:
    pump(150)
    window.grab().save(str(out / name))
    print(f"wrote {out / name}")


def table_of_papers(window: MainWindow, out: Path) -> None:
    """The table window over the whole library, default columns, quotes as cells."""
    tables = window.tables
    tables.open(TABLE_QUESTION, None, "Library")
    tables.window.resize(1366, 640)
    tables.window.mode_box.setCurrentIndex(tables.window.mode_box.findData("quotes"))
    tables.window.build_requested.emit()
    wait_until(lambda: not tables.window.building, 900, "the table")
    save(tables.window, out, "06-table.png")
    tables.window.close()


def figure_in_answer(window: MainWindow, client: EngineClient, out: Path) -> None:
    """An answer whose quote names a figure ("given in Figure 2"), the figure pictured under it."""
    window.ask_pane.question_box.setPlainText(FIGURE_QUESTION)
    window.ask_pane.scope_box.setCurrentIndex(1)  # library only
    window.ask_action.trigger()
    wait_until(lambda: not client.asking, 900, "the figure question")
    wait_until(lambda: "data:image/png" in window.ask_pane.answer_view.toHtml(), 120, "the figure's picture")
    window.ask_pane.answer_view.verticalScrollBar().setValue(0)
    save(window, out, "10-answer-figure.png")


def written_answer_progress(window: MainWindow, client: EngineClient, out: Path) -> None:
    """A written answer being drafted: the phase, tokens and rate shown while it streams; then Stop."""
    window.ask_pane.question_box.setPlainText("How is SPECTER trained?")
    window.ask_pane.write_box.setChecked(True)
    window.ask_action.trigger()
    wait_until(lambda: len(window.ask_pane._stream.split()) >= 25 or not client.asking, 900, "the draft")
    save(window, out, "07-writing.png")
    window.ask_pane.cancel_button.click()
    wait_until(lambda: not client.asking, 120, "the stop")


def papers(folder: Path) -> list[Path]:
    """Copies, in ``folder``, of the shared corpus (24 papers: long enough to catch indexing in progress),
    else of the demo papers; copies so the details pane shows a plain "Papers" folder."""
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    sources = sorted(CORPUS.glob("*.pdf")) if CORPUS.is_dir() else demo_papers()
    for source in sources:
        shutil.copy2(source, folder / source.name)
    return [folder]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--digest", action="store_true",
                        help="answer in digest mode (verbatim quotes by theme; no language model, no query rewriting)")
    parser.add_argument("--writer", type=Path, help="a GGUF model that can write: adds the written-answer state")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    app: QApplication = application()
    apply_theme(app)
    with tempfile.TemporaryDirectory(prefix="quire-shots-") as home:
        engine = Engine(Path(home) / "library")
        if args.digest:
            from dataclasses import replace

            engine.save_settings(replace(engine.settings, generation=replace(engine.settings.generation, digest=True),
                                         retrieval=replace(engine.settings.retrieval, rewrite=False)))
        client = EngineClient(engine)
        try:
            window = MainWindow(client, QSettings(str(Path(home) / "window.ini"), QSettings.Format.IniFormat),
                                progress_delay_ms=0)
            window.resize(*SIZE)
            window.show()
            wait_until(lambda: not client.busy, 60, "the first refresh")
            save(window, args.out, "01-empty.png")

            window.add_paths([str(path) for path in papers(Path(home) / "Papers")])
            wait_until(lambda: window.model.rowCount() >= 4 or not client.ingesting, 300, "the first papers")
            window.table.selectRow(1)
            save(window, args.out, "02-indexing.png")
            wait_until(lambda: not client.ingesting, 600, "indexing to finish")
            wait_until(lambda: not client.busy, 600, "embedding to finish")

            titles = [window.table.model().index(row, 0).data() or "" for row in range(window.table.model().rowCount())]
            window.table.selectRow(next((row for row, title in enumerate(titles) if "SPECTER" in title), 0))
            window.ask_pane.question_box.setPlainText(QUESTION)
            window.ask_pane.scope_box.setCurrentIndex(1)  # library only
            window.ask_action.trigger()
            wait_until(lambda: window.ask_pane.answer is not None or not client.asking, 900, "the answer")
            if window.ask_pane.answer is None:
                raise SystemExit("screenshots: the question was not answered")
            window.ask_pane.answer_view.verticalScrollBar().setValue(0)
            save(window, args.out, "03-answer.png")
            bar = window.ask_pane.answer_view.verticalScrollBar()
            bar.setValue(bar.maximum())  # the references, one per cited paper with its pages
            save(window, args.out, "05-references.png")
            bar.setValue(0)

            answer = window.ask_pane.answer
            cited = next((c.n for s in answer.sentences for c in s.citations if c.rects), None)
            cited = cited or (answer.references[0].n if answer.references else None)
            if cited is None:
                raise SystemExit("screenshots: the answer cites nothing")
            sentence = next((i for i, s in enumerate(answer.sentences) if any(c.n == cited for c in s.citations)), -1)
            window.ask_pane.citation_activated.emit(cited, sentence)
            wait_until(lambda: bool(window.viewer.highlight_rects), 60, "the highlight")
            save(window, args.out, "04-viewer-highlight.png")
            for name, size in OTHER_SIZES.items():
                window.resize(*size)
                pump(300)  # the splitters and the library's columns settle
                window.ask_pane.citation_activated.emit(cited, sentence)  # opened again at this size
                pump(300)
                save(window, args.out, name)
            window.resize(*SIZE)
            table_of_papers(window, args.out)
            figure_in_answer(window, client, args.out)
            if args.writer:
                from dataclasses import replace

                settings = engine.settings
                client.save_settings(replace(settings, generation=replace(settings.generation, model=str(args.writer),
                                                                          digest=False),
                                             retrieval=replace(settings.retrieval, rewrite=False)))
                wait_until(lambda: not client.busy, 60, "the settings")
                written_answer_progress(window, client, args.out)
            window.close()
        finally:
            client.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
