"""PDF -> pages -> text lines with boxes -> passages. Pure functions over PyMuPDF output."""

from __future__ import annotations

from typing import Any

__all__ = ["IngestOptions", "ParsedDocument", "parse_pdf"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: importing the pipeline imports PyMuPDF (a second), which commands that
    # only read the library (`quire library list`, `quire doctor`) should not pay for.
    if name in __all__:
        from engine.ingest import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
