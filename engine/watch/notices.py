"""What a past answer says about papers whose files went away: it still opens, quotes as saved."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from engine.types import LIBRARY_SOURCE, PaperReference
from engine.watch.state import MissingFile


def file_notices(papers: Iterable[PaperReference], missing: Iterable[MissingFile],
                 in_library: Callable[[str], bool]) -> list[str]:
    """One line per cited library paper whose file is missing or that was removed from the library."""
    gone = {entry.doc_id: entry for entry in missing}
    notices = []
    for paper in papers:
        if paper.source != LIBRARY_SOURCE:
            continue
        name = paper.bib.title or paper.doc_id
        if paper.doc_id in gone:
            notices.append(f"[{paper.n}] {name} is missing ({gone[paper.doc_id].describe()}); the quotes are shown "
                           "as they were saved.")
        elif not in_library(paper.doc_id):
            notices.append(f"[{paper.n}] {name} is no longer in the library (removed, or replaced by a new version "
                           "of its file); the quotes are shown as they were saved.")
    return notices
