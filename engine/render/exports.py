"""Reference-manager exports by name: BibTeX, RIS and CSL-JSON, of an answer's cited papers or of
library papers, all from the same values (the user's corrections and imports included)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.bibliography import Bibliography
from engine.errors import EngineError
from engine.render.bibtex import cited_papers, works_to_bibtex
from engine.render.ris import works_to_csl_json, works_to_ris
from engine.types import Answer, Document, DocumentStatus

# Name -> (writer, file suffix). The names are what `--format` accepts and what the app offers.
FORMATS: dict[str, tuple[Callable[[Sequence[Bibliography]], str], str]] = {
    "bibtex": (works_to_bibtex, ".bib"),
    "ris": (works_to_ris, ".ris"),
    "csl-json": (works_to_csl_json, ".json"),
}


class ExportFormatError(EngineError):
    """An export format Quire does not write."""


def _writer(format_name: str) -> Callable[[Sequence[Bibliography]], str]:
    try:
        return FORMATS[format_name][0]
    except KeyError:
        raise ExportFormatError(f"No export format {format_name!r}; choose one of {', '.join(FORMATS)}.") from None


def export_documents(documents: Sequence[Document], format_name: str) -> str:
    """Library papers in ``format_name``; papers that could not be read (no metadata) are left out."""
    writer = _writer(format_name)
    usable = [document for document in documents if document.status != DocumentStatus.FAILED]
    return writer([document.bib for document in usable])


def export_answer(answer: Answer, format_name: str) -> str:
    """The papers ``answer`` cites, in ``format_name``."""
    return _writer(format_name)([paper.bib for paper in cited_papers(answer)])
