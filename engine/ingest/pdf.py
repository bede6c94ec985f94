"""Opening a PDF safely: every way a file can be unreadable becomes an actionable IngestError."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pymupdf

from engine.errors import IngestError, PasswordRequiredError
from engine.progress import human_size

# Text extraction flags: ligatures expanded (no PRESERVE_LIGATURES), text outside the page dropped.
TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE

# Readers look for the end-of-file marker in the last kilobyte or so; a download cut short has none.
_EOF_MARKER = b"%%EOF"
_TAIL_BYTES = 2048

_TRUNCATED = ("the PDF is incomplete: the file ends before the PDF does (an interrupted download or copy?); "
              "download it again")

_MAGIC_KINDS = [
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"PK\x03\x04", "a ZIP archive (Word/EPUB?)"),
    (b"<!doctype html", "a web page (HTML)"),
    (b"<html", "a web page (HTML)"),
    (b"{\\rtf", "an RTF document"),
    (b"\xd0\xcf\x11\xe0", "an old Word/Office document"),
]


# A file this large with less than 1/_HOLLOW_RATIO of it on disk is mostly holes (a preallocated or
# unfinished download, a disk image): reading it would take minutes and find no PDF. Real PDFs are
# compressed already, so even a compressing file system keeps far more of them than that.
_HOLLOW_MIN_SIZE = 64 << 20
_HOLLOW_RATIO = 16


def refuse_hollow(path: Path, found: os.stat_result) -> None:
    """Raise an :class:`IngestError` for a large file that is mostly holes, before anything reads it."""
    blocks = getattr(found, "st_blocks", None)  # absent on Windows; 0 where a file system does not count
    if not blocks or found.st_size < _HOLLOW_MIN_SIZE:
        return
    stored = blocks * 512
    if stored * _HOLLOW_RATIO < found.st_size:
        raise IngestError(str(path), f"the file is {human_size(found.st_size)} but only {human_size(stored)} of it "
                                     "is stored on disk: it is mostly empty space (an unfinished download or a "
                                     "placeholder), not a whole PDF; download or copy the paper again")


def file_hash(path: Path, chunk_size: int = 1 << 20) -> str:
    """SHA-256 of the file's bytes, read in chunks so huge files don't fill memory."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(chunk_size):
                digest.update(chunk)
    except FileNotFoundError:
        raise IngestError(
            str(path),
            "the file disappeared while it was being read; check that it was not moved or deleted, then add it again",
        ) from None
    except OSError as exc:
        raise IngestError(str(path), f"cannot read the file ({exc.strerror}); check its permissions") from None
    return digest.hexdigest()


def _sniff(head: bytes) -> str:
    lowered = head.lstrip()[:64].lower()
    for magic, kind in _MAGIC_KINDS:
        if lowered.startswith(magic.lower()):
            return kind
    try:
        head.decode("utf-8")
        return "a plain text file"
    except UnicodeDecodeError:
        return "an unknown binary file"


def open_pdf(path: Path, password: str | None = None) -> pymupdf.Document:
    """Open ``path`` as a PDF or raise an :class:`IngestError` that says what to do."""
    where = str(path)
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(1024)
            handle.seek(max(0, size - _TAIL_BYTES))
            ends_properly = _EOF_MARKER in handle.read()
    except FileNotFoundError:
        raise IngestError(where, "file not found; it may have been moved or deleted") from None
    except OSError as exc:
        raise IngestError(where, f"cannot read the file ({exc.strerror}); check its permissions") from None
    if size == 0:
        raise IngestError(where, "the file is empty (0 bytes); download or export it again")
    if b"%PDF" not in head:
        raise IngestError(
            where,
            f"this is not a PDF, it looks like {_sniff(head)}; export or download the paper as PDF and add that file",
        )
    try:
        document = pymupdf.open(where, filetype="pdf")
    except Exception as exc:  # MuPDF reports damage with several exception types
        raise IngestError(
            where,
            _TRUNCATED if not ends_properly else
            f"the PDF is damaged and could not be repaired ({exc}); download it again or re-save it from a PDF viewer",
        ) from None
    if document.is_repaired and not ends_properly:
        # MuPDF rebuilds what it can of a cut-off file, often every page with most of the text
        # missing; indexing that would hide the damage from the user.
        document.close()
        raise IngestError(where, _TRUNCATED)
    if document.needs_pass:
        if not password:
            document.close()
            raise PasswordRequiredError(
                where, "the PDF is password-protected; add it again with its password (quire ingest --password ...)"
            )
        if not document.authenticate(password):
            document.close()
            raise PasswordRequiredError(where, "the password given does not open this PDF; check it and try again")
    try:
        pages = document.page_count
    except RuntimeError:  # MuPDF: "Invalid number of pages", a page tree counting pages that are not there
        document.close()
        raise IngestError(where, "the PDF's page tree is damaged (it counts pages that are not in the file); "
                                 "re-save it from a PDF viewer or download it again") from None
    if pages == 0:
        document.close()
        raise IngestError(where, "the PDF has no readable pages (truncated or damaged); download it again")
    return document
