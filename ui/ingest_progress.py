"""The status-bar strip shown while papers are being added (what is happening, a bar, and Cancel),
and the one-line account of a finished batch."""

from __future__ import annotations

import time
from collections import Counter

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget

from engine.types import Outcome

_BAR_STEPS = 1000
_LABEL_WIDTH = 360


class IngestProgress(QWidget):
    """Shows file and page progress; appears only once work has lasted ``show_delay_ms``.

    The delay (as in Anki's progress handling) keeps a quick one-file add from flashing a bar.
    """

    def __init__(self, cancel_action: QAction, parent: QWidget | None = None, show_delay_ms: int = 400) -> None:
        super().__init__(parent)
        self._files_done = 0
        self._files_total = 0
        self._file_name = ""

        self._label = QLabel(self)
        self._label.setTextFormat(Qt.TextFormat.PlainText)  # file names are data, not markup
        self._label.setFixedWidth(_LABEL_WIDTH)
        self._label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)  # next to its bar
        self._label.setAccessibleName("Ingestion status")
        self._bar = QProgressBar(self)
        self._bar.setRange(0, _BAR_STEPS)
        self._bar.setTextVisible(False)
        self._bar.setFixedWidth(160)
        self._bar.setAccessibleName("Ingestion progress")
        self._eta = QLabel(self)
        self._eta.setTextFormat(Qt.TextFormat.PlainText)
        self._eta.setAccessibleName("Time left")
        self._eta.setMinimumWidth(96)
        self._started = time.monotonic()
        self._cancel = QToolButton(self)
        self._cancel.setDefaultAction(cancel_action)
        self._cancel.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self._cancel.setAccessibleName("Cancel adding papers")

        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._label)
        layout.addWidget(self._bar)
        layout.addWidget(self._eta)
        layout.addWidget(self._cancel)

        self._show_timer = QTimer(self)
        self._show_timer.setSingleShot(True)
        self._show_timer.setInterval(show_delay_ms)
        self._show_timer.timeout.connect(self.show)
        self.hide()

    def start(self) -> None:
        self._files_done = self._files_total = 0
        self._file_name = ""
        self._bar.setRange(0, 0)  # busy, not an empty bar, until the first file's progress says how far along
        self._started = time.monotonic()
        self._eta.setText("")
        self._label.setText("Looking for PDFs…")
        if self._show_timer.interval() <= 0:
            self.show()
        else:
            self._show_timer.start()

    def stop(self) -> None:
        self._show_timer.stop()
        self.hide()

    def set_cancelling(self) -> None:
        self._label.setText("Cancelling after the current page…")

    def update_progress(self, stage: str, done: int, total: int, label: str) -> None:
        if stage == "ingest":
            self._files_done, self._files_total, self._file_name = done, total, label
            fraction = done / total if total else 0.0
            text = f"Adding {min(done + 1, total)} of {total}: {label}" if done < total else "Finishing…"
        elif stage == "parse" and self._files_total:
            # Pages refine the bar within the current file's share of the batch.
            fraction = (self._files_done + (done / total if total else 0.0)) / self._files_total
            text = f"Adding {self._files_done + 1} of {self._files_total}: {self._file_name}, page {done} of {total}"
        else:
            fraction = done / total if total else 0.0
            text = label
        if total:
            self._bar.setRange(0, _BAR_STEPS)
            self._bar.setValue(round(fraction * _BAR_STEPS))
        self._eta.setText(eta_text(time.monotonic() - self._started, fraction))
        metrics = self._label.fontMetrics()
        self._label.setText(metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, _LABEL_WIDTH))

    def status_text(self) -> str:
        return self._label.text()

    def eta(self) -> str:
        return self._eta.text()


def eta_text(elapsed_s: float, fraction: float) -> str:
    """"about 2 min left" from the pace so far; nothing until the estimate means something."""
    if fraction <= 0.02 or fraction >= 1.0 or elapsed_s < 2.0:
        return ""
    remaining = elapsed_s * (1.0 - fraction) / fraction
    if remaining < 60:
        return f"about {max(5, round(remaining / 5) * 5)} s left"
    if remaining < 3600:
        return f"about {round(remaining / 60)} min left"
    return f"about {remaining / 3600:.1f} h left"


def plural(count: int, noun: str) -> str:
    """``1 paper``, ``3 papers``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def summarize(outcomes: Counter[str]) -> str:
    """A one-line account of a finished batch, for the status bar."""
    parts = []
    if outcomes[Outcome.ADDED]:
        parts.append(f"added {plural(outcomes[Outcome.ADDED], 'paper')}")
    if outcomes[Outcome.UPDATED]:
        parts.append(f"updated {outcomes[Outcome.UPDATED]}")
    if outcomes[Outcome.UNCHANGED]:
        parts.append(f"{outcomes[Outcome.UNCHANGED]} already in the library")
    if outcomes[Outcome.FAILED]:
        parts.append(f"{outcomes[Outcome.FAILED]} could not be added")
    if not parts:
        return "No PDF files found there."
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."
