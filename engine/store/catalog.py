"""The library catalog: one SQLite file (WAL mode) written one document per transaction.

A document's row, pages, passages, rectangles and FTS entries are written in the same
transaction, so a crash at any moment leaves either the whole document or none of it, and the
next run simply adds what is missing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.disk import OPEN_ROOM, disk_full_message, is_disk_full
from engine.errors import DocumentNotFoundError, StoreError
from engine.sqlite import connect, connect_read_only, transaction, use_wal, writable_place
from engine.store.codec import (
    BIBLIOGRAPHY_COLUMNS,
    bibliography_columns,
    decode_bibliography,
    decode_figure_region,
    decode_table_row,
    decode_words,
    encode_bibliography,
    encode_figure_region,
    encode_table_row,
    encode_words,
)
from engine.store.overlay import apply_edits
from engine.store.schema import SCHEMA_VERSION, current_version, ensure_schema, sqlite_utils_db
from engine.text.keywords import keyword_text, title_keywords
from engine.types import Document, DocumentStatus, Page, PageRect, Passage, Rect

if TYPE_CHECKING:
    import sqlite_utils


@dataclass(frozen=True)
class FileRecord:
    """A file path the library has seen, with the size and mtime it had then."""

    path: str
    doc_id: str
    size: int
    mtime: float


def _cannot_open(path: Path, exc: sqlite3.DatabaseError) -> str:
    """Why the catalog cannot be opened, with the advice that fits: permissions and a full disk are not damage."""
    if is_disk_full(exc, path.parent):
        return disk_full_message(f"the library database {path.name}", path.parent, OPEN_ROOM)
    if not writable_place(path) or "readonly" in str(exc) or "unable to open" in str(exc):
        return (f"The library database {path} cannot be opened for writing ({exc}): its folder or file is "
                "read-only, or you lack permission. Make them writable (check the owner and the mount), "
                "or use another library folder with --home; the file itself is not damaged.")
    return (f"The library database {path} cannot be opened ({exc}). If the file is damaged, move it aside and "
            "ingest your PDFs again.")


class Library:
    """Thread-safe access to one catalog database; every public call is atomic."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.read_only = False
        self.full_disk_notice = ""  # set when the library opened read-only because its disk is full
        conn: sqlite3.Connection | None = None
        try:
            conn = connect(path)
            use_wal(conn)
            conn.execute("PRAGMA foreign_keys=ON")
            ensure_schema(conn)
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            disk_full = path.is_file() and is_disk_full(exc, path.parent)
            if not (path.is_file() and not writable_place(path)) and not disk_full:
                raise StoreError(_cannot_open(path, exc)) from None
            # A library on a read-only disk or folder, or on a full one (opening for writing needs room for
            # SQLite's log and index): everything that only reads (list, doctor, export, search) still works.
            conn = self._open_read_only(path, exc)
            self.read_only = True
            if disk_full:
                self.full_disk_notice = disk_full_message(f"changes to the library database {path.name}",
                                                           path.parent, OPEN_ROOM)
        self._conn = conn
        self._lock = threading.RLock()

    @staticmethod
    def _open_read_only(path: Path, why: sqlite3.DatabaseError) -> sqlite3.Connection:
        try:
            conn = connect_read_only(path)
            if current_version(conn) != SCHEMA_VERSION:
                conn.close()
                raise StoreError(f"The library database {path} was written by another version of Quire and must be "
                                 "upgraded, which needs write access; its folder is read-only. Open it once where it "
                                 "can be written, or use another library folder with --home.")
            return conn
        except sqlite3.DatabaseError:
            raise StoreError(_cannot_open(path, why)) from None

    @cached_property
    def db(self) -> sqlite_utils.Database:
        """sqlite-utils over the same connection (loaded on first use: most commands never need it)."""
        return sqlite_utils_db(self._conn)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; rolled back on any error, including cancellation."""
        self.check_writable()
        with transaction(self._conn, self._lock) as conn:
            yield conn

    def check_writable(self) -> None:
        """Raise :class:`StoreError`, saying why and what to do, when this library cannot be changed."""
        if self.full_disk_notice:
            raise StoreError(self.full_disk_notice)
        if self.read_only:
            raise StoreError(f"The library {self.path.parent} is read-only (its folder or disk cannot be written), "
                             "so it can be searched and read but not changed (it is not damaged). Make it writable, or "
                             "copy it somewhere that is and use that folder with --home.")

    # --- files ---------------------------------------------------------------------------

    def file_record(self, path: str) -> FileRecord | None:
        with self._lock:
            row = self._conn.execute("SELECT path, doc_id, size, mtime FROM files WHERE path=?", (path,)).fetchone()
        return FileRecord(*row) if row else None

    def add_file(self, record: FileRecord, replaces: str | None = None) -> None:
        """Point a path at a stored document; ``replaces`` names the document the path held before."""
        with self.transaction() as conn:
            if replaces and replaces != record.doc_id:
                self._release(conn, replaces, record.path)
            conn.execute("INSERT OR REPLACE INTO files(path, doc_id, size, mtime) VALUES (?,?,?,?)",
                         (record.path, record.doc_id, record.size, record.mtime))

    def files_under(self, folder: str) -> list[tuple[FileRecord, DocumentStatus]]:
        """Every file record inside ``folder`` (a resolved path), with its document's status."""
        prefix = folder.rstrip(os.sep) + os.sep
        with self._lock:
            rows = self._conn.execute(
                "SELECT f.path, f.doc_id, f.size, f.mtime, d.status FROM files f JOIN documents d ON d.id = f.doc_id "
                "WHERE substr(f.path, 1, ?) = ? ORDER BY f.path", (len(prefix), prefix)).fetchall()
        return [(FileRecord(*row[:4]), DocumentStatus(row[4])) for row in rows]

    def file_paths(self, doc_id: str) -> list[str]:
        """The paths that hold a document."""
        with self._lock:
            return [row[0] for row in self._conn.execute("SELECT path FROM files WHERE doc_id=? ORDER BY path",
                                                         (doc_id,))]

    def drop_file(self, path: str) -> None:
        """Forget one path; its document goes only when no other file still holds it (a moved file)."""
        with self.transaction() as conn:
            row = conn.execute("SELECT doc_id FROM files WHERE path=?", (path,)).fetchone()
            if row is not None:
                self._release(conn, row[0], path)

    # --- writing documents ---------------------------------------------------------------

    def write_document(self, document: Document, passages: Iterable[Passage], pages: list[Page],
                       file: FileRecord, replaces: str | None = None,
                       final_status: Callable[[], tuple[DocumentStatus, str]] | None = None) -> Document:
        """Store a document with its passages in one transaction and return it as stored.

        ``passages`` may be a generator that parses as it goes; ``pages`` is read after it is
        exhausted, and ``final_status`` (if given) then decides the status and its note.
        ``replaces`` names a previous version of the same file to delete.
        """
        now = time.time()
        with self.transaction() as conn:
            if replaces and replaces != document.id:
                _carry_over(conn, replaces, document.id)
                self._release(conn, replaces, file.path)
            self._delete_document(conn, document.id)
            conn.execute("INSERT INTO documents(id, content_hash, path, status, added_at, updated_at) "
                         "VALUES (?, ?, ?, ?, ?, ?)",
                         (document.id, document.content_hash, document.path, "ingesting", now, now))
            count = self._insert_passages(conn, passages)
            conn.executemany(
                "INSERT INTO pages(doc_id, number, width, height, word_count, has_text_layer, ocr_used) "
                "VALUES (?,?,?,?,?,?,?)",
                [(page.doc_id, page.number, page.width, page.height, page.word_count,
                  int(page.has_text_layer), int(page.ocr_used)) for page in pages])
            status, note = final_status() if final_status else (document.status, document.error)
            stored = replace(document, passage_count=count, page_count=len(pages), added_at=now,
                             status=status, error=note)
            conn.execute(
                f"UPDATE documents SET {_SET_BIBLIOGRAPHY}, abstract=?, page_count=?, passage_count=?, status=?, "
                "error=?, file_size=? WHERE id=?",
                (*encode_bibliography(stored.bib), stored.abstract, stored.page_count, stored.passage_count,
                 stored.status.value, stored.error, stored.file_size, stored.id))
            conn.execute("INSERT OR REPLACE INTO files(path, doc_id, size, mtime) VALUES (?,?,?,?)",
                         (file.path, stored.id, file.size, file.mtime))
            apply_edits(conn, stored.id)  # imports and the user's corrections outlive a re-read of the PDF
        return self.document(stored.id)

    def write_failure(self, document: Document, file: FileRecord) -> None:
        """Remember a file that could not be read, with the reason, so the UI can show it."""
        now = time.time()
        with self.transaction() as conn:
            self._delete_document(conn, document.id)
            conn.execute(
                "INSERT INTO documents(id, content_hash, path, status, error, file_size, added_at, updated_at) "
                "VALUES (?,?,?,?,?,?,?,?)",
                (document.id, document.content_hash, document.path, DocumentStatus.FAILED.value,
                 document.error, document.file_size, now, now))
            conn.execute("INSERT OR REPLACE INTO files(path, doc_id, size, mtime) VALUES (?,?,?,?)",
                         (file.path, document.id, file.size, file.mtime))

    def _insert_passages(self, conn: sqlite3.Connection, passages: Iterable[Passage]) -> int:
        # Raw sqlite3: the ingest hot path, and each passage's rowid keys its rectangles and FTS row.
        count = 0
        for passage in passages:
            cursor = conn.execute(
                "INSERT INTO passages(id, doc_id, ordinal, text, page_start, page_end, char_start, char_end, "
                "content_hash, is_reference, words, kind, language, table_row, figure_region) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (passage.id, passage.doc_id, passage.ordinal, passage.text, passage.page_start,
                 passage.page_end, passage.char_start, passage.char_end, passage.content_hash,
                 int(passage.is_reference), encode_words(passage.words), passage.kind, passage.language,
                 encode_table_row(passage.table), encode_figure_region(passage.figure)))
            rowid = cursor.lastrowid
            conn.executemany(
                "INSERT INTO passage_rects(passage_rowid, seq, page, x0, y0, x1, y1) VALUES (?,?,?,?,?,?,?)",
                [(rowid, seq, page, *rect) for seq, (page, rect) in enumerate(passage.rects)])
            # The index holds each text's words as its language has them (engine/text/keywords.py).
            conn.execute("INSERT INTO passages_fts(rowid, title, text) VALUES (?,?,?)",
                         (rowid, title_keywords(passage.title), keyword_text(passage.text, passage.language)))
            count += 1
        return count

    def remove_document(self, doc_id: str) -> Document:
        """Delete a document, its passages and its file records."""
        document = self.document(doc_id)
        with self.transaction() as conn:
            self._delete_document(conn, doc_id)
        return document

    @classmethod
    def _release(cls, conn: sqlite3.Connection, doc_id: str, path: str) -> None:
        """Detach ``path`` from ``doc_id``; the document goes only when no other file still holds it.

        A copy of the old version elsewhere keeps the document alive (and becomes its path).
        """
        conn.execute("DELETE FROM files WHERE path=? AND doc_id=?", (path, doc_id))
        other = conn.execute("SELECT path FROM files WHERE doc_id=? ORDER BY path LIMIT 1", (doc_id,)).fetchone()
        if other is None:
            cls._delete_document(conn, doc_id)
        else:
            conn.execute("UPDATE documents SET path=? WHERE id=? AND path=?", (other[0], doc_id, path))

    @staticmethod
    def _delete_document(conn: sqlite3.Connection, doc_id: str) -> None:
        # FTS5 tables know nothing of foreign keys: remove their rows explicitly first.
        conn.execute("DELETE FROM passages_fts WHERE rowid IN (SELECT rowid FROM passages WHERE doc_id=?)", (doc_id,))
        conn.execute("DELETE FROM documents WHERE id=?", (doc_id,))

    # --- reading -------------------------------------------------------------------------

    def documents(self) -> list[Document]:
        with self._lock:
            rows = self._conn.execute(f"SELECT {_DOC_COLUMNS} FROM documents ORDER BY added_at, id").fetchall()
        return [_document(row) for row in rows]

    def document(self, doc_id: str) -> Document:
        with self._lock:
            row = self._conn.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE id=?", (doc_id,)).fetchone()
            if row is None:
                # Let users type a unique prefix of an id, as with git hashes.
                rows = self._conn.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE id LIKE ? || '%' LIMIT 2",
                                          (doc_id,)).fetchall()
                row = rows[0] if len(rows) == 1 and len(doc_id) >= 4 else None
        if row is None:
            raise DocumentNotFoundError(f"No document with id {doc_id!r}; `quire library list` shows the ids.",
                                        doc_id=doc_id)
        return _document(row)

    def find_by_hash(self, content_hash: str) -> Document | None:
        with self._lock:
            row = self._conn.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE content_hash=?",
                                     (content_hash,)).fetchone()
        return _document(row) if row else None

    def paper_languages(self) -> dict[str, str]:
        """Each paper's language: the one most of its prose passages were told to be in ("" not known)."""
        with self._lock:
            rows = self._conn.execute("SELECT doc_id, language, COUNT(*) FROM passages WHERE kind = 'text' "
                                      "GROUP BY doc_id, language").fetchall()
        best: dict[str, tuple[int, str]] = {}
        for doc_id, language, count in rows:
            if count > best.get(doc_id, (0, ""))[0]:
                best[doc_id] = (count, language)
        return {doc_id: language for doc_id, (_, language) in best.items()}

    def pages(self, doc_id: str) -> list[Page]:
        with self._lock:
            rows = self._conn.execute("SELECT doc_id, number, width, height, word_count, has_text_layer, ocr_used "
                                      "FROM pages WHERE doc_id=? ORDER BY number", (doc_id,)).fetchall()
        return [Page(r[0], r[1], r[2], r[3], r[4], bool(r[5]), bool(r[6])) for r in rows]

    def passages(self, doc_id: str) -> list[Passage]:
        return self._passages("p.doc_id=? ORDER BY p.ordinal", (doc_id,))

    def passage(self, passage_id: str) -> Passage:
        found = self._passages("p.id=?", (passage_id,))
        if not found:
            raise DocumentNotFoundError(f"No passage with id {passage_id!r}.")
        return found[0]

    def _passages(self, where: str, params: tuple[Any, ...]) -> list[Passage]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT p.rowid, p.id, p.doc_id, p.ordinal, p.text, d.title, p.page_start, p.page_end, "
                "p.char_start, p.char_end, p.content_hash, p.is_reference, p.words, p.kind, p.language, p.table_row, "
                "p.figure_region "
                f"FROM passages p JOIN documents d ON d.id = p.doc_id WHERE {where}", params).fetchall()
            rects: dict[int, list[PageRect]] = {}
            for rowid, page, x0, y0, x1, y1 in self._conn.execute(
                    "SELECT passage_rowid, page, x0, y0, x1, y1 FROM passage_rects WHERE passage_rowid IN "
                    "(SELECT value FROM json_each(?)) ORDER BY passage_rowid, seq",
                    (json.dumps([row[0] for row in rows]),)):
                rects.setdefault(rowid, []).append(PageRect(page, Rect(x0, y0, x1, y1)))
        return [Passage(id=r[1], doc_id=r[2], ordinal=r[3], text=r[4], title=r[5], page_start=r[6], page_end=r[7],
                        char_start=r[8], char_end=r[9], rects=tuple(rects.get(r[0], ())), content_hash=r[10],
                        is_reference=bool(r[11]), words=decode_words(r[12]), kind=r[13], language=r[14],
                        table=decode_table_row(r[15]), figure=decode_figure_region(r[16])) for r in rows]

    def version(self) -> tuple[int, int]:
        """A value that changes whenever the catalog changes, whoever changed it: compare it with the last one.

        SQLite's ``data_version`` changes when any other connection (another process's, or another
        engine's in this one) commits, and ``total_changes`` counts this connection's own writes.
        Both are read from memory (the log's shared index, no table), so polling this costs
        microseconds (benchmarks/library_change_poll.py), and every writer is seen without
        having to announce itself.
        """
        with self._lock:
            data_version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
            return data_version, self._conn.total_changes

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
        """Rows of one read-only statement, under the catalog's lock like every other call."""
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def counts(self) -> dict[str, int]:
        with self._lock:
            docs = dict(self._conn.execute("SELECT status, COUNT(*) FROM documents GROUP BY status").fetchall())
            passages = self._conn.execute("SELECT COUNT(*) FROM passages").fetchone()[0]
            pages = self._conn.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
        return {"documents": sum(docs.values()), "passages": passages, "pages": pages,
                **{f"documents_{status.replace(' ', '_')}": n for status, n in docs.items()}}

    def check_integrity(self) -> list[str]:
        """Problems found by SQLite's own check and by our invariants; empty when healthy."""
        problems: list[str] = []
        with self._lock:
            result = self._conn.execute("PRAGMA integrity_check").fetchone()[0]
            if result != "ok":
                problems.append(f"sqlite integrity_check: {result}")
            for doc_id, stored, actual in self._conn.execute(
                    "SELECT d.id, d.passage_count, (SELECT COUNT(*) FROM passages p WHERE p.doc_id=d.id) "
                    "FROM documents d").fetchall():
                if stored != actual:
                    problems.append(f"document {doc_id}: {actual} passages stored, {stored} expected")
            orphans = self._conn.execute("SELECT COUNT(*) FROM passages_fts WHERE rowid NOT IN "
                                         "(SELECT rowid FROM passages)").fetchone()[0]
            if orphans:
                problems.append(f"{orphans} search entries without a passage")
            half = self._conn.execute("SELECT COUNT(*) FROM documents WHERE status='ingesting'").fetchone()[0]
            if half:
                problems.append(f"{half} half-ingested documents")
        return problems


def _carry_over(conn: sqlite3.Connection, old_id: str, new_id: str) -> None:
    """A file whose content changed becomes a new document (ids are content hashes): it keeps the old
    version's collections, imported metadata, corrections and Zotero link."""
    for table, columns in (("document_collections", "collection, source"),
                           ("document_imported", "source, fields, fill_only, imported_at"),
                           ("document_edits", "edits, edited_at")):
        conn.execute(f"INSERT OR IGNORE INTO {table}(doc_id, {columns}) SELECT ?, {columns} FROM {table} "
                     "WHERE doc_id=?", (new_id, old_id))
    conn.execute("UPDATE zotero_items SET doc_id=? WHERE doc_id=?", (new_id, old_id))


_SET_BIBLIOGRAPHY = ", ".join(f"{name}=?" for name in BIBLIOGRAPHY_COLUMNS)

# The collections come along as a JSON list, sorted, so one query gives the whole library's filing.
_DOC_COLUMNS = ("id, content_hash, path, abstract, page_count, passage_count, status, error, file_size, added_at, "
                "(SELECT json_group_array(collection) FROM (SELECT DISTINCT collection FROM document_collections "
                f"WHERE doc_id = documents.id ORDER BY collection)), {bibliography_columns()}")


def _document(row: tuple[Any, ...]) -> Document:
    return Document(id=row[0], content_hash=row[1], path=row[2], abstract=row[3], page_count=row[4],
                    passage_count=row[5], status=DocumentStatus(row[6]), error=row[7], file_size=row[8],
                    added_at=row[9], collections=tuple(json.loads(row[10] or "[]")),
                    bib=decode_bibliography(row[11:]))

