"""A datastore passage that has no PDF: its title, metadata, link and text, all shown as plain text."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QTextBrowser, QWidget

DATASTORE_NOTE = "This paper is in an attached datastore, not in your library, so there is no PDF page to show."
REMOVED_NOTE = ("This paper was removed from your library after the answer was given. This is the passage as the "
                "answer kept it, with the quote marked; add the PDF again to see it on its page.")


def record_html(title: str, text: str, *, authors: Sequence[str] = (), year: int | None = None,
                source: str = "", url: str = "", quote: str = "", removed: bool = False) -> str:
    """The record as HTML in which every piece of paper data is escaped; the quote is marked in the text."""
    meta = [part for part in (", ".join(authors), str(year) if year else "", source and f"from {source}") if part]
    body = html.escape(text)
    if quote and quote in text:
        start = text.index(quote)
        body = (html.escape(text[:start]) + '<span style="background:#ffd98a">' + html.escape(quote) + "</span>"
                + html.escape(text[start + len(quote):]))
    link = ""
    if url.startswith(("http://", "https://")):  # only web links; a record cannot make us open a file or app
        link = f'<p><a href="{html.escape(url, quote=True)}">{html.escape(url)}</a></p>'
    return (f'<h3 style="margin-bottom:4px">{html.escape(title or "Untitled record")}</h3>'
            f'<p style="color:#666;margin-top:0">{html.escape(" · ".join(meta))}</p>{link}'
            f'<p style="line-height:140%">{body.replace(chr(10), "<br>")}</p>'
            f'<p style="color:#888"><i>{REMOVED_NOTE if removed else DATASTORE_NOTE}</i></p>')


class RecordView(QTextBrowser):
    """Read-only, selectable; web links open in the browser only when clicked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Datastore passage")
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._open_link)

    def show_record(self, title: str, text: str, **metadata: object) -> None:
        self.setHtml(record_html(title, text, **metadata))  # type: ignore[arg-type]

    @staticmethod
    def _open_link(url: QUrl) -> None:
        if url.scheme() in ("http", "https"):
            QDesktopServices.openUrl(url)
