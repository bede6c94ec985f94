"""OCR for pages without a text layer, through PyMuPDF's Tesseract support when installed."""

from __future__ import annotations

import functools
import logging
import shutil
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pymupdf

log = logging.getLogger(__name__)

HOW_TO_ENABLE = ("install Tesseract OCR to read them (Debian/Ubuntu: sudo apt install tesseract-ocr; "
                 "macOS: brew install tesseract; Windows: the UB Mannheim installer), then add the file again")


@functools.cache
def tesseract_available() -> bool:
    """True when the tesseract program and its language data can be found."""
    if shutil.which("tesseract") is None:
        return False
    import pymupdf  # only when tesseract exists: `quire doctor` need not load PyMuPDF otherwise

    try:
        pymupdf.get_tessdata()
    except Exception:  # PyMuPDF raises a plain RuntimeError when no tessdata folder exists
        return False
    return True


def has_no_text_layer(page: pymupdf.Page, word_count: int) -> bool:
    """A page with images but no text: a scan or a picture of text."""
    return word_count == 0 and bool(page.get_images(full=False))


def ocr_words(page: pymupdf.Page, flags: int, language: str = "eng", dpi: int = 300) -> list[Any]:
    """Words (PyMuPDF tuples) of a page read by Tesseract."""
    textpage = page.get_textpage_ocr(flags=flags, language=language, dpi=dpi, full=True)
    return page.get_text("words", textpage=textpage, flags=flags)
