"""Checking the data inside a pack's datastore database before it is installed.

The schema check (:func:`engine.datastore.store.check_schema`) proves the tables are Quire's; this
module proves that what they hold can be read by every search: text columns are UTF-8, the
authors of each record are a flat JSON list of names, the search index holds every passage, and
the counts are the manifest's. A value that passes here can never fail a search later, so one bad
pack is refused at install instead of breaking every search after it.

Bounded and streaming: rows are read in batches on their own read-only connection, as bytes (so
invalid UTF-8 is found, not raised mid-search), under a time limit, and nothing is held in memory
beyond one batch.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

_BATCH = 2_000
_PROGRESS_STEPS = 20_000
# Each record's text columns that a search hit shows (passages' text is checked on its own).
_RECORD_TEXT = ("id", "title", "url", "authors", "doi", "arxiv_id")


class ContentProblem(Exception):
    """What is wrong with a datastore database's data, in words for the user (without the pack's name)."""


@dataclass(frozen=True)
class ContentCounts:
    """What the database holds once checked."""

    records: int
    passages: int


def check_contents(path: Path, seconds: float) -> ContentCounts:
    """Read every record and passage of the datastore database at ``path`` once; raise ContentProblem at the first
    value a search could not use, or when reading takes longer than ``seconds``."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    deadline = time.monotonic() + seconds
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_STEPS)
    try:
        conn.execute("PRAGMA trusted_schema=OFF")
        conn.text_factory = bytes  # decoded here, where a bad byte is a finding, not an exception
        return _check(conn)
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            raise ContentProblem(f"reading it took longer than {seconds:,.0f} s") from None
        raise ContentProblem(f"SQLite could not read it: {exc}") from None
    except sqlite3.DatabaseError as exc:
        raise ContentProblem(f"SQLite could not read it: {exc}") from None
    finally:
        conn.close()


def _check(conn: sqlite3.Connection) -> ContentCounts:
    records = _check_rows(conn, "records", _RECORD_TEXT)
    passages = _check_rows(conn, "passages", ("text",))
    wrong_year = conn.execute("SELECT id FROM records WHERE typeof(year) NOT IN ('integer', 'null') LIMIT 1").fetchone()
    if wrong_year is not None:
        raise ContentProblem(f"record {_shown(wrong_year[0])} has a year that is not a whole number")
    # SQLite's JSON reader refuses nesting deeper than 1000 on its own, without recursing in Python.
    bad_authors = conn.execute(
        "SELECT id FROM records WHERE json_valid(authors) = 0 OR json_type(authors) != 'array' OR EXISTS "
        "(SELECT 1 FROM json_each(records.authors) WHERE json_each.type != 'text') LIMIT 1").fetchone()
    if bad_authors is not None:
        raise ContentProblem(f"the authors of record {_shown(bad_authors[0])} are not a list of names")
    bad_ordinal = conn.execute("SELECT rowid FROM passages WHERE typeof(ordinal) != 'integer' OR typeof(record_rowid) "
                               "!= 'integer' LIMIT 1").fetchone()
    if bad_ordinal is not None:
        raise ContentProblem(f"passage {bad_ordinal[0]} has a place in its record that is not a whole number")
    indexed = conn.execute("SELECT count(*) FROM passages_fts").fetchone()[0]
    if indexed != passages:
        raise ContentProblem(f"its search index holds {indexed:,} passages of {passages:,}; build the pack again")
    return ContentCounts(records=records, passages=passages)


def _check_rows(conn: sqlite3.Connection, table: str, columns: tuple[str, ...]) -> int:
    """Every value of ``columns`` in ``table`` decodes as UTF-8; returns the row count."""
    select = ", ".join(f"CAST({column} AS BLOB)" for column in columns)
    count, after = 0, -1 << 63
    while True:
        rows = conn.execute(f"SELECT rowid, {select} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT ?",
                            (after, _BATCH)).fetchall()
        if not rows:
            return count
        for rowid, *values in rows:
            for column, value in zip(columns, values, strict=True):
                if value is None:
                    continue
                try:
                    value.decode("utf-8")
                except UnicodeDecodeError:
                    raise ContentProblem(f"{table} row {rowid} holds bytes that are not UTF-8 text in its "
                                         f"{column}") from None
        count += len(rows)
        after = rows[-1][0]


def _shown(value: bytes | int | None) -> str:
    """A record id for a message: decoded leniently and cut short (it came from the pack's maker)."""
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return repr(text if len(text) <= 60 else text[:57] + "...")
