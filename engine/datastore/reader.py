"""Streaming peS2o-style JSON lines (``.jsonl`` or ``.jsonl.gz``) with line numbers.

The file is read one line at a time, never whole: a multi-GB datastore costs the memory of one
line. Each line becomes a :class:`Record` or a :class:`LineProblem` saying what was wrong and
where; a gzip stream cut short ends the reading with :attr:`JsonLinesReader.ended_early` set,
keeping every complete line read before the damage.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from engine.bibliography import Bibliography
from engine.datastore.record_title import split_glued_title
from engine.errors import EngineError
from engine.ingest.printed import caps_title_recased

# A line longer than this is reported and skipped without being held in memory: no real record
# (the longest peS2o papers are a few MB) comes close, and one runaway line must not exhaust RAM.
MAX_LINE_BYTES = 64 << 20
_CHUNK = 1 << 20
_ACRONYM_CONTEXT = 4000  # characters of a record's text read for the acronyms a capitals title keeps
_GZIP_MAGIC = b"\x1f\x8b"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DOI_IN_TEXT = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[A-Za-z0-9])")
_ARXIV_IN_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([a-z\-]+(?:\.[A-Z]{2})?/\d{7}|\d{4}\.\d{4,5})(?:v\d+)?", re.I)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.I)
_ARXIV_ID = re.compile(r"^(?:arxiv:)?(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$", re.I)


class DatastoreInputError(EngineError):
    """A datastore file cannot be read at all (missing, not JSON lines, not gzip)."""


@dataclass(frozen=True)
class Record:
    """One paper of a datastore file, with the line it came from. ``id`` is the file's own id."""

    id: str
    bib: Bibliography
    text: str
    line: int
    origin: str = ""  # the record's "source" field (e.g. "s2orc"), kept for display


@dataclass(frozen=True)
class LineProblem:
    """A line that was skipped, and why."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


class JsonLinesReader:
    """Iterates ``(line number, raw bytes)`` over a JSON-lines file, gzip or plain.

    ``position``/``size`` give progress in bytes of the file on disk (compressed bytes for
    gzip); ``ended_early`` is a message when the file stops mid-stream (a truncated or
    damaged gzip), ``None`` when it was read to its end.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.is_file():
            raise DatastoreInputError(f"{path} is not a file; give the path of a .jsonl or .jsonl.gz datastore file.")
        self.size = path.stat().st_size
        self.ended_early: str | None = None
        self.oversized: list[int] = []
        self._raw: IO[bytes] | None = None

    @property
    def position(self) -> int:
        raw = self._raw
        try:
            return raw.tell() if raw is not None and not raw.closed else self.size
        except (OSError, ValueError):
            return 0

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """Every line with its 1-based number (blank lines are counted but not yielded).

        A line over :data:`MAX_LINE_BYTES` is yielded as ``b""`` (and listed in ``oversized``)
        after being skipped chunk by chunk, so it never sits in memory whole.
        """
        pending = bytearray()
        number = 0
        skipping = False
        for chunk in self._chunks():
            pending += chunk
            start = 0
            while True:
                newline = pending.find(b"\n", start)
                if newline < 0:
                    break
                if skipping:
                    skipping = False
                    start = newline + 1
                    continue
                number += 1
                line = bytes(pending[start:newline])
                start = newline + 1
                if len(line) > MAX_LINE_BYTES:
                    self.oversized.append(number)
                    yield number, b""
                elif line.strip():
                    yield number, line
            del pending[:start]
            if len(pending) > MAX_LINE_BYTES and not skipping:
                number += 1
                self.oversized.append(number)
                skipping = True
                yield number, b""
            if skipping:
                pending.clear()
        if self.ended_early is not None:
            self.ended_early += f" after line {number:,}; the {number:,} complete lines before it were read"
            return
        if pending.strip() and not skipping:
            yield number + 1, bytes(pending)  # a last line without a final newline

    def _chunks(self) -> Iterator[bytes]:
        """The file's bytes, decompressed when it is gzip; sets ``ended_early`` when the stream is damaged."""
        with self.path.open("rb") as raw:
            self._raw = raw
            gzipped = raw.read(2) == _GZIP_MAGIC
            raw.seek(0)
            if not gzipped:
                while chunk := raw.read(_CHUNK):
                    yield chunk
                return
            decompressor = zlib.decompressobj(wbits=31)
            in_member = False
            while data := raw.read(_CHUNK):
                if not in_member and data[:2] != _GZIP_MAGIC:
                    return  # trailing bytes after the last member (padding): nothing more to read
                while data:
                    in_member = True
                    try:
                        # Bounded output per call: a small, highly compressed file cannot balloon memory.
                        out = decompressor.decompress(data, _CHUNK)
                    except zlib.error as exc:
                        self.ended_early = f"the compressed data is damaged ({exc})"
                        return
                    if out:
                        yield out
                    if decompressor.eof:
                        # Concatenated gzip members (what `cat a.gz b.gz` makes) continue the stream.
                        data = decompressor.unused_data
                        decompressor = zlib.decompressobj(wbits=31)
                        in_member = False
                        if data and data[:2] != _GZIP_MAGIC:
                            return
                    else:
                        data = decompressor.unconsumed_tail
            if in_member and not decompressor.eof:
                self.ended_early = "the file ends early (the gzip stream was cut short)"


def parse_line(number: int, raw: bytes) -> Record | LineProblem:
    """Turn one line into a record, or say why it cannot be one."""
    if not raw:
        return LineProblem(number, f"longer than {MAX_LINE_BYTES >> 20} MiB; skipped")
    try:
        data = json.loads(raw)
    except UnicodeDecodeError:
        return LineProblem(number, "not UTF-8 text")
    except ValueError as exc:
        return LineProblem(number, f"not valid JSON ({exc})")
    except RecursionError:  # a line of deeply nested brackets: Python's parser gives up, the import goes on
        return LineProblem(number, "JSON nested too deeply to read (thousands of brackets inside each other)")
    if not isinstance(data, dict):
        return LineProblem(number, f"a JSON {type(data).__name__}, not an object with id, title and text")
    return record_from_json(number, data)


def record_from_json(number: int, data: dict[str, Any]) -> Record | LineProblem:
    """Validate the fields of one JSON object: ``id`` and some text are required, the rest optional."""
    raw_id = data.get("id")
    if raw_id is None or raw_id == "":
        return LineProblem(number, "missing field 'id'")
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
        return LineProblem(number, f"'id' must be a string or an integer, not {type(raw_id).__name__}")
    record_id = str(raw_id).strip()
    if not record_id or _CONTROL.search(record_id) or len(record_id) > 512:
        return LineProblem(number, "'id' is empty, longer than 512 characters or contains control characters")
    title, text = data.get("title"), data.get("text")
    for field, value in (("title", title), ("text", text)):
        if value is not None and not isinstance(value, str):
            return LineProblem(number, f"'{field}' must be a string, not {type(value).__name__}")
    title = " ".join((title or "").split())
    text = (text or "").strip()
    if "text" not in data:
        return LineProblem(number, f"record {record_id!r} is missing field 'text'")
    title, glued_abstract = split_glued_title(title)  # "document: Title Abstract…" records
    if glued_abstract:
        text = f"{glued_abstract}\n\n{text}".strip()
    if not text and not title:
        return LineProblem(number, f"record {record_id!r} has an empty 'title' and 'text'")
    title = caps_title_recased(title, text[:_ACRONYM_CONTEXT])  # "GRAPH ATTENTION NETWORKS", as references show it
    url = _string(data.get("url"))
    doi = _doi(_string(data.get("doi")) or _string(_external(data, "doi")), url)
    arxiv_id = _arxiv(_string(data.get("arxiv_id")) or _string(data.get("arxiv")) or _string(_external(data, "arxiv")),
                      url, doi)
    bib = Bibliography(title=title, authors=_authors(data.get("authors")), year=_year(data.get("year")), doi=doi,
                       arxiv_id=arxiv_id, url=url)
    return Record(id=record_id, bib=bib, text=text, line=number, origin=_string(data.get("source")))


def _string(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _external(data: dict[str, Any], key: str) -> Any:
    # S2-style records keep identifiers in "externalids" / "external_ids".
    for name in ("externalids", "external_ids", "externalIds"):
        ids = data.get(name)
        if isinstance(ids, dict):
            for candidate, value in ids.items():
                if candidate.lower() == key:
                    return value
    return None


def _year(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 1000 <= value <= 2999 else None
    if isinstance(value, str) and value.strip()[:4].isdigit():
        year = int(value.strip()[:4])
        return year if 1000 <= year <= 2999 else None
    return None


def _authors(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = re.split(r";| and ", value)
    if not isinstance(value, list):
        return ()
    names: list[str] = []
    for author in value:
        if isinstance(author, dict):
            author = author.get("name") or " ".join(
                str(author.get(k) or "") for k in ("first", "middle", "last")).strip()
        if isinstance(author, list):
            author = " ".join(str(part) for part in author)
        if isinstance(author, str) and author.strip():
            names.append(" ".join(author.split()))
    return tuple(names)


def _doi(doi: str, url: str) -> str:
    found = _DOI_IN_TEXT.search(doi) or _DOI_IN_TEXT.search(url)
    return found.group(1).lower() if found else ""


def _arxiv(arxiv_id: str, url: str, doi: str) -> str:
    given = _ARXIV_ID.match(arxiv_id)
    if given:
        return given.group(1).lower()
    in_url = _ARXIV_IN_URL.search(url)
    if in_url:
        return in_url.group(1).lower()
    in_doi = _ARXIV_DOI.match(doi)
    if in_doi:
        found = _ARXIV_ID.match(in_doi.group(1))
        return found.group(1).lower() if found else ""
    return ""
