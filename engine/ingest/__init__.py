"""PDF -> pages -> text lines with boxes -> passages. Pure functions over PyMuPDF output."""

from __future__ import annotations

from engine.ingest.pipeline import IngestOptions, ParsedDocument, parse_pdf

__all__ = ["IngestOptions", "ParsedDocument", "parse_pdf"]
