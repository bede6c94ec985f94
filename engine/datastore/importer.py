"""Importing a JSON-lines file into a datastore: streamed, batched, resumable, every bad line reported.

Records are cut into passages and written in batches (one transaction each) together with the
number of input lines they cover. A rerun of the same file (same size and same first and last
MiB) skips the committed lines without parsing them and carries on; a record whose id is
already stored from another line or file is a duplicate, reported with where the first copy
came from, and skipped (the first copy wins).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.datastore.passages import split_passages
from engine.datastore.reader import JsonLinesReader, LineProblem, Record, parse_line
from engine.datastore.store import DatastoreStore, StoredPassage
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.types import content_hash

log = logging.getLogger(__name__)

# Records per transaction: few enough that a kill loses seconds of work, many enough that
# commits are a small share of the time.
BATCH_RECORDS = 500
# ...or fewer when records are long, so a batch never holds more than this much text.
BATCH_CHARS = 16 << 20
_FINGERPRINT_BYTES = 1 << 20


@dataclass
class ImportReport:
    """What one ``datastore add`` did. ``problems`` lists skipped lines (up to a cap; ``problem_count`` is exact)."""

    name: str
    path: str
    records_added: int = 0
    passages_added: int = 0
    words_added: int = 0
    resumed_from_line: int = 0
    lines_read: int = 0
    problems: list[LineProblem] = field(default_factory=list)
    problem_count: int = 0
    ended_early: str | None = None
    already_imported: bool = False
    seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "path": self.path, "records_added": self.records_added,
                "passages_added": self.passages_added, "words_added": self.words_added,
                "resumed_from_line": self.resumed_from_line, "lines_read": self.lines_read,
                "problem_count": self.problem_count, "ended_early": self.ended_early,
                "already_imported": self.already_imported, "seconds": round(self.seconds, 3),
                "problems": [{"line": p.line, "reason": p.reason} for p in self.problems]}


def file_fingerprint(path: Path) -> str:
    """Size plus a hash of the first and last MiB: recognises the same file again without reading it all."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(_FINGERPRINT_BYTES))
        handle.seek(max(0, size - _FINGERPRINT_BYTES))
        digest.update(handle.read(_FINGERPRINT_BYTES))
    return f"{size}:{digest.hexdigest()[:32]}"


def passages_of(record: Record, passage_words: int) -> list[StoredPassage]:
    """A record's passages; a record with a title but no text becomes one passage holding the title."""
    title = record.bib.title
    texts = split_passages(record.text, passage_words) or [title]
    return [StoredPassage(record.id, ordinal, title, text, content_hash(f"{title}\n{text}" if title else text))
            for ordinal, text in enumerate(texts)]


def import_jsonl(store: DatastoreStore, name: str, path: Path, *, passage_words: int = 250,
                 progress: ProgressCallback = no_progress, cancel: CancelToken | None = None,
                 batch_records: int = BATCH_RECORDS) -> ImportReport:
    """Import (or resume importing) ``path`` into ``store``; cancel stops after a committed batch."""
    started = time.perf_counter()
    reader = JsonLinesReader(path)
    fingerprint = file_fingerprint(path)
    state = store.import_state(fingerprint, str(path))
    report = ImportReport(name=name, path=str(path), resumed_from_line=state.lines_done)
    if state.finished:
        report.already_imported = True
        report.problems = store.problems(state.id)
        report.problem_count = state.problem_count
        report.ended_early = state.ended_early or None
        return report
    batch: list[tuple[Record, list[StoredPassage]]] = []
    problems: list[LineProblem] = []
    batch_chars = 0
    last_line = state.lines_done
    label = f"{path.name}: resuming after line {state.lines_done:,}" if state.lines_done else path.name
    progress(Progress("import", 0, reader.size, label))

    def flush() -> None:
        nonlocal batch, problems, batch_chars
        kept, duplicates = _drop_duplicates(store, state.id, batch)
        problems.extend(duplicates)
        store.write_batch(state.id, [(record, passages) for record, passages in kept], problems, last_line)
        report.records_added += len(kept)
        report.passages_added += sum(len(passages) for _, passages in kept)
        report.words_added += sum(len(record.text.split()) for record, _ in kept)
        progress(Progress("import", reader.position, reader.size,
                          f"{report.records_added:,} records, {report.passages_added:,} passages"))
        batch, problems, batch_chars = [], [], 0

    for number, raw in reader.lines():
        last_line = number
        if number <= state.lines_done:
            continue
        parsed = parse_line(number, raw)
        if isinstance(parsed, LineProblem):
            problems.append(parsed)
        else:
            batch.append((parsed, passages_of(parsed, passage_words)))
            batch_chars += len(parsed.text)
        if len(batch) >= batch_records or batch_chars >= BATCH_CHARS or len(problems) >= batch_records:
            flush()
            if cancel is not None:
                cancel.check()
    flush()
    report.lines_read = last_line
    report.ended_early = reader.ended_early
    store.finish_import(state.id, reader.ended_early)
    report.problems = store.problems(state.id)
    report.problem_count = store.import_state(fingerprint, str(path)).problem_count
    report.seconds = time.perf_counter() - started
    log.info("imported %d records (%d passages) from %s in %.1f s", report.records_added, report.passages_added,
             path, report.seconds)
    return report


def _drop_duplicates(store: DatastoreStore, import_id: int, batch: Sequence[tuple[Record, list[StoredPassage]]]
                     ) -> tuple[list[tuple[Record, list[StoredPassage]]], list[LineProblem]]:
    """Split a batch into new records and duplicate-id problems (the first copy, stored or earlier, wins)."""
    stored = store.existing([record.id for record, _ in batch])
    seen: dict[str, int] = {}
    kept: list[tuple[Record, list[StoredPassage]]] = []
    problems: list[LineProblem] = []
    for record, passages in batch:
        if record.id in stored:
            first_import, first_line = stored[record.id]
            if (first_import, first_line) == (import_id, record.line):
                continue  # written by an earlier run of this same import: resuming
            where = f"line {first_line}" if first_import == import_id else \
                f"line {first_line} of {store.import_path(first_import)}"
            problems.append(LineProblem(record.line, f"duplicate id {record.id!r} (first at {where}); skipped"))
        elif record.id in seen:
            problems.append(LineProblem(record.line,
                                        f"duplicate id {record.id!r} (first at line {seen[record.id]}); skipped"))
        else:
            seen[record.id] = record.line
            kept.append((record, passages))
    return kept, problems
