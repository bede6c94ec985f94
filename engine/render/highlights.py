"""An answer's quotes written back into the papers as highlight annotations (PyMuPDF).

Each cited quote becomes one highlight per page it covers, over the boxes of its words on that
page (what the answer view highlights), with the question and the sentence it supports as the
note. Any PDF reader shows them, and Zotero imports them as annotations.

By default the highlights go into a copy, ``<name>.quire.pdf`` beside the paper (or in a chosen
folder), and the original's bytes are never written. In place, the file is written to a temporary
file beside it and renamed over it, so a crash leaves the old file or the new one, never half of
one; the paper's own annotations are kept either way. Each highlight carries a key (the passage
and the quote's span) in its subject, so annotating again adds only the quotes not there yet.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import EngineError
from engine.types import LIBRARY_SOURCE, Answer, Citation, Rect

COPY_SUFFIX = ".quire.pdf"  # watched folders skip these: a highlighted copy is not another paper
_SUBJECT_PREFIX = "Quire quote "
_YELLOW = (1.0, 0.9, 0.2)


class AnnotateError(EngineError):
    """An answer's highlights cannot be written (a read-only file, a paper not in the library)."""


@dataclass(frozen=True)
class Highlight:
    """One quote to mark on one page (1-based)."""

    key: str
    page: int
    rects: tuple[Rect, ...]
    note: str


@dataclass
class AnnotatedPaper:
    """What annotating did to one cited paper."""

    doc_id: str
    source: str  # the paper's PDF
    written: str = ""  # the file the highlights are in ('' when nothing could be written)
    added: int = 0
    already_there: int = 0
    problem: str = ""


@dataclass
class _Paper:
    doc_id: str
    highlights: list[Highlight] = field(default_factory=list)


def highlights_of(answer: Answer) -> dict[str, list[Highlight]]:
    """Every cited library quote of ``answer``, by the id of the paper it is from."""
    by_paper: dict[str, _Paper] = {}
    for sentence in answer.sentences:
        for citation in sentence.citations:
            reference = answer.passage(citation.passage_id)
            if reference.source != LIBRARY_SOURCE or not citation.rects:
                continue
            paper = by_paper.setdefault(reference.doc_id, _Paper(reference.doc_id))
            note = f"{answer.question}\n\n{sentence.text}"
            paper.highlights.extend(_per_page(citation, note))
    return {doc_id: _unique(paper.highlights) for doc_id, paper in by_paper.items()}


def _per_page(citation: Citation, note: str) -> list[Highlight]:
    pages: dict[int, list[Rect]] = {}
    for placed in citation.rects:
        pages.setdefault(placed.page, []).append(placed.rect)
    digest = hashlib.sha1(f"{citation.passage_id}:{citation.quote_start}:{citation.quote_end}".encode()).hexdigest()
    return [Highlight(f"{digest[:16]}-p{page}", page, tuple(rects), note) for page, rects in sorted(pages.items())]


def _unique(highlights: Iterable[Highlight]) -> list[Highlight]:
    """One highlight per quote and page, however many sentences cite it (their notes joined)."""
    merged: dict[str, Highlight] = {}
    for highlight in highlights:
        seen = merged.get(highlight.key)
        if seen is None:
            merged[highlight.key] = highlight
        elif highlight.note.split("\n\n", 1)[1] not in seen.note:
            merged[highlight.key] = Highlight(seen.key, seen.page, seen.rects,
                                              seen.note + "\n\n" + highlight.note.split("\n\n", 1)[1])
    return list(merged.values())


def annotate_answer(answer: Answer, pdf_of: Callable[[str], str], *, in_place: bool = False,
                    folder: Path | None = None) -> list[AnnotatedPaper]:
    """Write ``answer``'s quotes into each cited paper's PDF (``pdf_of`` gives its path); one result per paper.

    A paper that cannot be written is reported with the reason and the others are still written.
    """
    results = []
    for doc_id, highlights in highlights_of(answer).items():
        try:
            source = Path(pdf_of(doc_id))
        except EngineError as exc:
            results.append(AnnotatedPaper(doc_id, "", problem=str(exc)))
            continue
        result = AnnotatedPaper(doc_id, str(source))
        try:
            target = source if in_place else _copy_path(source, folder)
            result.added, result.already_there = _write(source, target, highlights)
            result.written = str(target)
        except AnnotateError as exc:
            result.problem = str(exc)
        results.append(result)
    return results


def _copy_path(source: Path, folder: Path | None) -> Path:
    name = source.name[:-4] if source.name.lower().endswith(".pdf") else source.name
    return (folder if folder is not None else source.parent) / (name + COPY_SUFFIX)


def _write(source: Path, target: Path, highlights: list[Highlight]) -> tuple[int, int]:
    """Add the highlights not there yet; returns (added, already there)."""
    import pymupdf

    if not source.is_file():
        raise AnnotateError(f"{source} is not there (moved or deleted?); nothing was written for this paper.")
    # A copy made before is annotated again (so its highlights are not doubled); the original is only read.
    start = target if target.is_file() else source
    _refuse_unwritable(target)
    saved: Path | None = None
    with pymupdf.open(start) as document:
        added = already = 0
        for highlight in highlights:
            if not 1 <= highlight.page <= document.page_count:
                continue
            page = document[highlight.page - 1]
            present = {annot.info.get("subject", "") for annot in page.annots()}
            if _SUBJECT_PREFIX + highlight.key in present:
                already += 1
                continue
            annot = page.add_highlight_annot([pymupdf.Rect(*rect) for rect in highlight.rects])
            annot.set_colors(stroke=_YELLOW)
            annot.set_info(content=highlight.note, title="Quire", subject=_SUBJECT_PREFIX + highlight.key)
            annot.update()
            added += 1
        if added or start != target:
            saved = _save_beside(document, target)
    if saved is not None:  # renamed once the document is closed (Windows cannot replace an open file)
        try:
            if target.exists():
                os.chmod(saved, target.stat().st_mode & 0o7777)
            os.replace(saved, target)
        except OSError as exc:
            saved.unlink(missing_ok=True)
            raise AnnotateError(f"{target} could not be replaced ({exc.strerror}); it is unchanged.") from None
    return added, already


def _refuse_unwritable(target: Path) -> None:
    where = target.parent
    # The permission bits too: root may write anything, but a file marked read-only was marked so on purpose.
    if target.exists() and (not os.access(target, os.W_OK) or not target.stat().st_mode & 0o222):
        raise AnnotateError(f"{target} is read-only, so its highlights cannot be written into it; make it writable, "
                            "or save the highlights into a copy (the default) instead. Nothing was changed.")
    if not os.access(where, os.W_OK):
        raise AnnotateError(f"The folder {where} cannot be written; choose another folder for the highlighted copy. "
                            "Nothing was changed.")


def _save_beside(document: object, target: Path) -> Path:
    """Save to a hidden temporary file beside ``target`` (renamed into place afterwards: never half a file)."""
    handle, temporary = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".tmp", dir=target.parent)
    os.close(handle)
    try:
        document.save(temporary, garbage=1, deflate=True)  # type: ignore[attr-defined]
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return Path(temporary)
