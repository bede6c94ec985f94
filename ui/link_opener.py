"""Opening a ``quire://open`` link: the viewer at the link's page with its passage and quote lit.

Links come from the command line (``quire-desktop URL``), from a second launch handing its URL over,
or from anything else that calls :meth:`LinkOpener.open`. The link is read here, on the UI thread
(it is only text); finding the passage and the quote's boxes runs on the quick lane, and the viewer
then shows them exactly as it shows a clicked citation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from engine.links import LinkError, parse_open_link
from ui import errors
from ui.engine_client import EngineClient
from ui.engine_tasks import PassageLocation
from ui.pdf_viewer import PdfViewer

log = logging.getLogger(__name__)


class LinkOpener(QObject):
    """Turns ``quire://open`` links into the viewer at their page, quote highlighted."""

    def __init__(self, client: EngineClient, viewer: PdfViewer, status: Callable[[str], None],
                 parent: QWidget) -> None:
        super().__init__(parent)
        self._client, self._viewer, self._status, self._parent = client, viewer, status, parent

    def open(self, url: str) -> bool:
        """Start opening ``url``; False (and a message saying what is wrong) when it is not a Quire link."""
        try:
            link = parse_open_link(url)
        except LinkError as exc:
            errors.show_error(self._parent, f"This link cannot be opened.\n\n{exc}")
            return False
        log.info("Opening %s", url)
        self._client.locate_link(link, self._show)
        return True

    def _show(self, location: PassageLocation) -> None:
        title = location.reference.bib.title or Path(location.path).name
        if not self._viewer.show_passage(location.path, location.page, location.passage_rects,
                                         location.quote_rects, title=title, figure_rects=location.figure_rects):
            return  # the viewer said why (a moved or unreadable file)
        lost = bool(location.reference.passage_id) and not location.passage_rects
        self._status(f"{title}, page {location.page}" + (" (the linked passage is no longer in the library, so "
                                                           "nothing is highlighted)" if lost else ""))
