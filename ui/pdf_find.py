"""Find in the open paper: a row under the viewer's controls, shown by Ctrl+F (Library › Find in Paper).

Enter goes to the next match and Shift+Enter to the previous one, wrapping round; every match on the
page is drawn like a passage and the current one like a quote. Esc (or ×) closes the row and puts
back the citation highlight that was shown before. MuPDF's own search does the matching (case
folded, across line breaks), on the UI thread like rendering: a paper of tens of pages takes
milliseconds, and the search stops at MAX_MATCHES.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pymupdf
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from engine.types import PageRect, Rect

MAX_MATCHES = 1000  # a word found more often than this is no way to find a place

Match = tuple[PageRect, ...]  # one place a text occurs: a rectangle per line it spans


def find_matches(document: pymupdf.Document, text: str, limit: int = MAX_MATCHES) -> list[Match]:
    """Where ``text`` occurs, page by page in reading order; at most ``limit`` places."""
    text = " ".join(text.split())
    if not text:
        return []
    found: list[Match] = []
    for index in range(document.page_count):
        page = document[index]
        for rects in _occurrences(page, text):
            found.append(tuple(PageRect(index + 1, Rect(r.x0, r.y0, r.x1, r.y1)) for r in rects))
            if len(found) >= limit:
                return found
    return found


def _occurrences(page: pymupdf.Page, text: str) -> list[list[pymupdf.Rect]]:
    """MuPDF's hits grouped into occurrences. A phrase that runs onto the next line comes as a
    rectangle per line; a word hyphenated over two lines comes as one rectangle on its first part."""
    needle = _letters(text)
    piece = min(3, len(needle))
    # Read once, with the flags search_for uses on its own (joining words hyphenated over lines).
    textpage = page.get_textpage(flags=pymupdf.TEXTFLAGS_SEARCH)
    words = page.get_text("words")  # (x0, y0, x1, y1, word, ...): each part of a hyphenated word apart

    def letters_in(rect: pymupdf.Rect) -> str:
        """The letters of the words a rectangle lies on (the words' own boxes, not a clipped re-read)."""
        return "".join(_letters(w[4]) for w in words
                       if w[0] < rect.x1 and w[2] > rect.x0 and rect.y0 <= (w[1] + w[3]) / 2 <= rect.y1)

    # MuPDF now and then adds a sliver beside a hyphenated hit (one letter of the line above): a
    # rectangle holding no three letters of the text in a row is no part of it.
    hits = [(rect, letters_in(rect)) for rect in page.search_for(text, textpage=textpage)]
    hits = [(rect, letters) for rect, letters in hits
            if any(needle[i:i + piece] in letters for i in range(len(needle) - piece + 1))]
    groups: list[list[pymupdf.Rect]] = []
    seen = ""  # the letters of the last group's rectangles
    for rect, letters in hits:
        if groups and _continues(seen, letters, needle):
            groups[-1].append(rect)
            seen += letters
        else:
            groups.append([rect])
            seen = letters
    return groups


def _continues(seen: str, following: str, needle: str) -> bool:
    """Whether ``following`` (the next rectangle's letters) carries on an unfinished ``needle`` that ``seen`` began."""
    if needle in seen:
        return False
    for length in range(min(len(seen), len(needle) - 1), 0, -1):
        if seen.endswith(needle[:length]):
            rest = needle[length:]
            return following.startswith(rest) or rest.startswith(following)
    return False


def _letters(text: str) -> str:
    """Case-folded, without spaces and hyphens: how a line break may have split it does not matter."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


class FindBar(QWidget):
    """The find row. ``show_match(current, all)`` shows a match; ``closed()`` is called when it closes."""

    def __init__(self, document: Callable[[], pymupdf.Document | None],
                 show_match: Callable[[Match, Sequence[Match]], None], closed: Callable[[], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self.setAccessibleName("Find in paper")
        self._document, self._show_match, self._closed = document, show_match, closed
        self.matches: list[Match] = []
        self.current = -1
        self._searched: tuple[int, str] | None = None  # (document id, text) the matches belong to
        self.edit = _FindEdit(self)
        self.edit.setPlaceholderText("Find in this paper")
        self.edit.setAccessibleName("Find text")
        self.edit.setClearButtonEnabled(True)
        self.edit.returnPressed.connect(self.next)
        self.edit.previous_requested.connect(self.previous)
        self.edit.escape_pressed.connect(self.close_bar)
        self.edit.textEdited.connect(lambda _: self._forget())
        self.count_label = QLabel(self)
        self.count_label.setAccessibleName("Matches")
        close = QToolButton(self)
        close.setText("×")
        close.setToolTip("Close (Esc)")
        close.setAutoRaise(True)
        close.clicked.connect(self.close_bar)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.count_label)
        layout.addWidget(close)
        self.hide()

    def start(self) -> None:
        self.show()
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.selectAll()

    def next(self) -> None:
        self._step(1)

    def previous(self) -> None:
        self._step(-1)

    def close_bar(self) -> None:
        self.reset()
        self._closed()

    def reset(self) -> None:
        """Hide and forget the matches, without putting anything back (another paper or passage is shown)."""
        self._forget()
        self.hide()

    def _step(self, direction: int) -> None:
        document = self._document()
        if document is None:
            self.count_label.setText("Open a paper first")
            return
        text = self.edit.text()
        key = (id(document), " ".join(text.split()).casefold())
        if key != self._searched:
            self.matches, self.current, self._searched = find_matches(document, text), -1, key
        if not self.matches:
            self.count_label.setText("No matches" if text.strip() else "")
            return
        self.current = (self.current + direction) % len(self.matches) if self.current >= 0 else (
            0 if direction > 0 else len(self.matches) - 1)
        more = "+" if len(self.matches) >= MAX_MATCHES else ""
        self.count_label.setText(f"{self.current + 1} of {len(self.matches)}{more}")
        self._show_match(self.matches[self.current], self.matches)

    def _forget(self) -> None:
        self.matches, self.current, self._searched = [], -1, None
        self.count_label.setText("")


class _FindEdit(QLineEdit):
    """A line edit that reports Shift+Enter and Esc (QLineEdit keeps both to itself)."""

    previous_requested = Signal()
    escape_pressed = Signal()

    def event(self, event: QEvent) -> bool:
        # Esc also stops a running answer (a window-wide shortcut); in this box it closes the find row.
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent) \
                and event.key() == Qt.Key.Key_Escape:
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.previous_requested.emit()
            return
        if event.key() == Qt.Key.Key_Escape:
            self.escape_pressed.emit()
            return
        super().keyPressEvent(event)
