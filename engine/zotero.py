"""Import a Zotero library: its PDF attachments, with Zotero's metadata and collections.

``zotero.sqlite`` is opened read-only and ``immutable`` (``file:…?mode=ro&immutable=1``): Zotero
keeps an exclusive lock on it while it runs, and Quire must never write to it or wait for it. The
PDFs are read where Zotero keeps them (``storage/<attachment key>/<file>`` for stored files, the
file's own path for linked ones). A re-import is incremental: an item whose Zotero modification
time and file are unchanged is skipped; a changed one gets its metadata and collections again.

Zotero's tables (``items``, ``itemData``/``itemDataValues``/``fields``, ``itemTypes``,
``itemAttachments``, ``creators``/``itemCreators``, ``collections``/``collectionItems``,
``deletedItems``) are read by column name, and the attachment columns of older schemas
(``sourceItemID``, ``mimeType``) are accepted too.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import ZoteroError
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.types import IngestResult, Outcome
from engine.zotero_db import schema_notice, zotero_snapshot

if TYPE_CHECKING:
    from engine.store.catalog import Library

COLLECTION_SOURCE = "zotero"
_NOT_PAPERS = ("attachment", "note", "annotation")
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")
_LINKED_URL = 3
_FILE_SUFFIX = re.compile(r"\.(pdf|docx?|odt|rtf|ps|djvu|epub|html?)$")


@dataclass(frozen=True)
class ZoteroItem:
    """One PDF attachment and the metadata of the item it belongs to."""

    key: str  # the attachment's key, unique in its library
    library_id: int
    modified: str  # the later of the item's and the attachment's dateModified
    title: str
    authors: tuple[str, ...]
    year: int | None
    doi: str
    collections: tuple[str, ...]
    pdf: Path | None  # None when Zotero has no local file for it
    problem: str = ""  # why there is no file to read
    venue: str = ""  # the journal, proceedings or conference


@dataclass
class ZoteroReport:
    """What an import did: counts, and each item that could not be added with the reason."""

    added: int = 0  # papers new to the library
    # Items whose PDF the library already held (added from a folder, or by another Zotero item in the
    # same import): their details and collections joined that paper, and the library did not grow.
    merged: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (title or key, reason)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (title or key, a field left out and why)
    results: list[IngestResult] = field(default_factory=list)
    # Papers imported from items now in Zotero's trash: (the item, the paper); shown as missing, not removed.
    trashed: list[tuple[str, str]] = field(default_factory=list)
    collections_changed: int = 0  # unchanged items whose collections were added, renamed or emptied
    notice: str = ""  # the database is newer than the schemas Quire knows

    def summary(self) -> str:
        """``Zotero: 3 added, 6 merged into papers already here, 0 updated, 0 unchanged, 1 could not be added.``"""
        merged = f"{self.merged} merged into papers already here, " if self.merged else ""
        filed = f", {self.collections_changed} refiled" if self.collections_changed else ""
        trash = f", {len(self.trashed)} in Zotero's trash (marked missing)" if self.trashed else ""
        return (f"Zotero: {self.added} added, {merged}{self.updated} updated, {self.unchanged} unchanged{filed}"
                f"{trash}, {len(self.failed)} could not be added.")


def zotero_database(folder: Path) -> Path:
    """``zotero.sqlite`` in a Zotero data folder (or the file itself); ZoteroError if there is none."""
    folder = folder.expanduser()
    database = folder if folder.is_file() else folder / "zotero.sqlite"
    if not database.is_file():
        raise ZoteroError(f"{folder} is not a Zotero data folder: there is no zotero.sqlite in it. Zotero shows "
                          "its data folder in Settings › Advanced › Files and Folders (often ~/Zotero).")
    return database


# The tables Quire reads. Each must be a plain table: a view (or a virtual table) runs whatever SQL
# its author wrote whenever it is read, and a view over a recursive CTE never ends.
_TABLES_READ = ("items", "itemData", "itemDataValues", "fields", "itemTypes", "itemAttachments", "creators",
                "itemCreators", "creatorData", "creatorTypes", "collections", "collectionItems", "deletedItems")
_TABLES_READ_LOWER = frozenset(name.lower() for name in _TABLES_READ)
READ_SECONDS = 120.0  # a real library of 100,000 items reads in seconds; past this the file is not Zotero's
_PROGRESS_STEPS = 10_000  # SQLite steps between two looks at the clock (and at Ctrl-C)


def _check(conn: sqlite3.Connection, database: Path) -> None:
    try:
        conn.text_factory = _text  # one field that is not UTF-8 must not stop the whole import
        conn.execute("PRAGMA trusted_schema=OFF")
        # SQLite's names ignore case: a view named "itemdata" is what "FROM itemData" reads.
        not_tables = [f"{name} is a {'virtual table' if kind == 'table' else kind}"
                      for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master")
                      if str(name).lower() in _TABLES_READ_LOWER
                      and (kind != "table" or (sql or "").upper().startswith("CREATE VIRTUAL"))]
        if not_tables:
            raise ZoteroError(f"{database} is not a Zotero database Quire can read safely ({'; '.join(not_tables)}, "
                              "where Zotero has a plain table); it was not read. Point Quire at Zotero's own data "
                              "folder.")
        conn.execute("SELECT 1 FROM items LIMIT 1")
        _bound(conn)
        # A damaged page is only noticed when a query reads it, perhaps after metadata read from other damaged
        # pages was already taken for good: every page is checked first (seconds for a large library).
        problem = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        if problem != "ok":
            raise sqlite3.DatabaseError(f"database disk image is malformed: {problem}")
    except sqlite3.DatabaseError as exc:
        raise ZoteroError(_unreadable(database, exc, "cannot be read as a Zotero database")) from None


def _text(value: bytes) -> str:
    """A text value of Zotero's database as str; bytes that are not UTF-8 become U+FFFD, not an error."""
    return value.decode("utf-8", "replace")


def _as_text(value: object) -> str | None:
    """A value read where Zotero keeps text (a BLOB, a number, NULL there) as text, or None for NULL."""
    if value is None or isinstance(value, str):
        return value
    return _text(value) if isinstance(value, bytes) else str(value)


def _well_typed(rows: list[tuple], refused: list[ZoteroItem]) -> Iterator[tuple]:
    """The attachment rows whose ids are whole numbers, text columns as text; each other row becomes an item
    in ``refused`` that names the problem (reported as not added, while the rest is imported)."""
    for item_id, parent_id, link_mode, content_type, path, key, library_id, modified, parent_modified, kind in rows:
        key = _as_text(key) or "?"
        wrong = [name for name, value in (("itemID", item_id), ("parentItemID", parent_id), ("linkMode", link_mode),
                                          ("libraryID", library_id))
                 if value is not None and (not isinstance(value, int) or isinstance(value, bool))]
        if wrong or item_id is None:
            refused.append(ZoteroItem(key=key, library_id=1, modified="", title="", authors=(), year=None, doi="",
                                      collections=(), pdf=None, problem=(
                                          f"Zotero's database holds a value of the wrong type in {', '.join(wrong)} "
                                          "for this attachment, so it was skipped" if wrong else
                                          "Zotero's database holds no id for this attachment, so it was skipped")))
            continue
        yield (item_id, parent_id, link_mode, _as_text(content_type), _as_text(path), key, library_id,
               _as_text(modified), _as_text(parent_modified), _as_text(kind))


def _bound(conn: sqlite3.Connection) -> None:
    """Stop any query after READ_SECONDS; the handler, being Python, also lets Ctrl-C stop SQLite's loop."""
    deadline = time.monotonic() + READ_SECONDS

    def keep_going() -> int:
        return 1 if time.monotonic() > deadline else 0

    conn.set_progress_handler(keep_going, _PROGRESS_STEPS)


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}  # table names are ours


def read_zotero(folder: Path) -> list[ZoteroItem]:
    """Every PDF attachment in the Zotero library at ``folder`` that is not in the trash."""
    return read_zotero_library(folder).items


@dataclass
class ZoteroLibrary:
    """What one read of Zotero's database found."""

    items: list[ZoteroItem]
    trashed: list[str]  # "library/key" of the PDF attachments in Zotero's trash (or whose item is)
    notice: str = ""  # the database is newer than the schemas Quire knows


def read_zotero_library(folder: Path) -> ZoteroLibrary:
    """The PDF attachments, the trashed ones, and a notice when the schema is newer than Quire knows."""
    database = zotero_database(folder)
    try:
        with zotero_snapshot(database) as conn:
            _check(conn, database)
            trashed: list[str] = []
            items = list(_items(conn, database.parent, trashed))
            return ZoteroLibrary(items, trashed, schema_notice(conn))
    except sqlite3.DatabaseError as exc:
        raise ZoteroError(_unreadable(database, exc, "does not have the tables Quire expects of Zotero")) from None
    except OSError as exc:
        raise ZoteroError(f"{database} could not be copied for reading ({exc.strerror}).") from None


def _unreadable(database: Path, exc: sqlite3.DatabaseError, otherwise: str) -> str:
    """Why ``database`` could not be read, with what to do: a damaged file is not a missing table."""
    if isinstance(exc, sqlite3.OperationalError) and "interrupted" in str(exc):
        return (f"Reading {database} took longer than {READ_SECONDS:.0f} s, far longer than a Zotero library "
                "needs; it was stopped. Check that this is Zotero's own database.")
    if database.is_file() and database.stat().st_size == 0:
        return f"{database} is empty (0 bytes), not a Zotero database; nothing was imported."
    if any(sign in str(exc) for sign in ("malformed", "not a database", "corrupt")):
        return (f"{database} is damaged ({exc}), so nothing was imported. Zotero's “Check Database Integrity” "
                "(in its Advanced settings) can repair it; or, with Zotero closed, put back its automatic backup, "
                "zotero.sqlite.bak in the same folder. Then import again.")
    return f"{database} {otherwise} ({exc})."


def _items(conn: sqlite3.Connection, data_folder: Path, in_trash: list[str]) -> Iterator[ZoteroItem]:
    attachment_columns = _columns(conn, "itemAttachments")
    parent_column = "parentItemID" if "parentItemID" in attachment_columns else "sourceItemID"
    type_column = "contentType" if "contentType" in attachment_columns else "mimeType"
    trashed: set[int] = set()
    if _has(conn, "deletedItems"):  # Zotero's trash
        trashed = {row[0] for row in conn.execute("SELECT itemID FROM deletedItems")}
    fields = _fields(conn)
    creators = _creators(conn)
    collections = _collections(conn)
    rows = conn.execute(
        f"SELECT a.itemID, a.{parent_column}, a.linkMode, a.{type_column}, a.path, i.key, i.libraryID, "
        "i.dateModified, p.dateModified, t.typeName FROM itemAttachments a JOIN items i ON i.itemID = a.itemID "
        f"LEFT JOIN items p ON p.itemID = a.{parent_column} LEFT JOIN itemTypes t ON t.itemTypeID = p.itemTypeID "
        "ORDER BY a.itemID").fetchall()
    pdfs_of_parent: dict[int, int] = {}  # how many PDFs of each parent came before
    refused: list[ZoteroItem] = []
    for item_id, parent_id, link_mode, content_type, path, key, library_id, modified, parent_modified, kind in \
            _well_typed(rows, refused):
        path = path or ""
        if item_id in trashed or (parent_id is not None and parent_id in trashed):
            in_trash.append(f"{int(library_id or 1)}/{key}")
            continue
        if (content_type or "").lower() != "application/pdf" and not path.lower().endswith(".pdf"):
            continue
        if parent_id is not None and kind in _NOT_PAPERS:
            continue
        source = parent_id if parent_id is not None else item_id  # a standalone PDF is its own item
        data = fields.get(source, {})
        own_title = " ".join(fields.get(item_id, {}).get("title", "").split())
        title = " ".join((data.get("title") or own_title).split())
        if parent_id is None and is_file_name(title, path):
            title = ""  # Zotero titles a dropped PDF with its file name: the PDF's printed title is better
        if parent_id is not None:
            earlier = pdfs_of_parent.get(parent_id, 0)
            pdfs_of_parent[parent_id] = earlier + 1
            if earlier:  # the first PDF is the paper; later ones are supplements, appendices, slides
                title = attachment_title(title, own_title, path)
        pdf, problem = _attachment_file(data_folder, key, link_mode, path)
        yield ZoteroItem(
            key=key, library_id=int(library_id or 1), modified=max(str(modified or ""), str(parent_modified or "")),
            title=title,
            authors=tuple(creators.get(source, ())), year=_year(data.get("date", "")),
            doi=(data.get("DOI") or "").strip(), collections=tuple(sorted(collections.get(source, ()))),
            pdf=pdf, problem=problem, venue=_venue(data))
    yield from refused


# Zotero's fields for where a paper appeared, by item type, most specific first.
_VENUE_FIELDS = ("publicationTitle", "proceedingsTitle", "conferenceName", "bookTitle")


def _venue(data: dict[str, str]) -> str:
    return next((" ".join(data[name].split()) for name in _VENUE_FIELDS if (data.get(name) or "").strip()), "")


def _has(conn: sqlite3.Connection, table: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone() is not None


def _fields(conn: sqlite3.Connection) -> dict[int, dict[str, str]]:
    """itemID -> {fieldName: value} for the fields Quire uses."""
    found: dict[int, dict[str, str]] = {}
    for item_id, name, value in conn.execute(
            "SELECT d.itemID, f.fieldName, v.value FROM itemData d JOIN fields f ON f.fieldID = d.fieldID "
            "JOIN itemDataValues v ON v.valueID = d.valueID "
            "WHERE f.fieldName IN ('title', 'date', 'DOI', 'url', 'publicationTitle', 'proceedingsTitle', "
            "'conferenceName', 'bookTitle')"):
        found.setdefault(item_id, {})[name] = _as_text(value) or ""
    return found


def _creators(conn: sqlite3.Connection) -> dict[int, list[str]]:
    """itemID -> author names in Zotero's order ("First Last"; single-field names as they are)."""
    if "lastName" in _columns(conn, "creators"):
        query = ("SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode, ic.creatorTypeID FROM itemCreators ic "
                 "JOIN creators c ON c.creatorID = ic.creatorID ORDER BY ic.itemID, ic.orderIndex")
    else:  # schemas before Zotero 5 kept names in creatorData
        query = ("SELECT ic.itemID, d.firstName, d.lastName, d.fieldMode, ic.creatorTypeID FROM itemCreators ic "
                 "JOIN creators c ON c.creatorID = ic.creatorID JOIN creatorData d ON d.creatorDataID = "
                 "c.creatorDataID ORDER BY ic.itemID, ic.orderIndex")
    author_types = {row[0] for row in conn.execute("SELECT creatorTypeID FROM creatorTypes WHERE creatorType='author'")
                    } if _has(conn, "creatorTypes") else set()
    names: dict[int, list[tuple[bool, str]]] = {}
    for item_id, first, last, field_mode, type_id in conn.execute(query):
        first, last = _as_text(first), _as_text(last)  # a name stored as a BLOB or a number is still a name
        name = (last or "") if field_mode == 1 else " ".join(part for part in (first, last) if part)
        if name.strip():
            names.setdefault(item_id, []).append((not author_types or type_id in author_types, " ".join(name.split())))
    # Authors if the item names any; otherwise whoever it credits (editors of a volume, say).
    return {item_id: [n for is_author, n in entries if is_author] or [n for _, n in entries]
            for item_id, entries in names.items()}


def _collections(conn: sqlite3.Connection) -> dict[int, set[str]]:
    """itemID -> full collection paths ("Thesis › Related work")."""
    rows = conn.execute("SELECT collectionID, collectionName, parentCollectionID FROM collections").fetchall()
    by_id = {cid: (" ".join(str(name or "").split()), parent) for cid, name, parent in rows}

    def full_name(cid: int) -> str:
        # A damaged database can make collections each other's parents; the path stops at the first
        # collection met twice, so a cycle gives "A › B", not "A › B › A › B …".
        names: list[str] = []
        seen: set[int] = set()
        current: int | None = cid
        while current is not None and current in by_id and current not in seen:
            seen.add(current)
            name, current = by_id[current]
            names.append(name)
        return " › ".join(reversed([n for n in names if n]))

    found: dict[int, set[str]] = {}
    for cid, item_id in conn.execute("SELECT collectionID, itemID FROM collectionItems"):
        if cid in by_id and (path := full_name(cid)):
            found.setdefault(item_id, set()).add(path)
    return found


# Titles Zotero or a browser connector gives the main PDF of an item; they say nothing about it.
_GENERIC_ATTACHMENT_TITLES = {"pdf", "full text", "full text pdf", "accepted version", "submitted version",
                              "published version", "preprint pdf", "arxiv fulltext pdf", "attachment"}


def is_file_name(title: str, path: str) -> bool:
    """Whether an attachment's title is only its file's name ("standalone.pdf", "standalone")."""
    name = Path(path.removeprefix("storage:").removeprefix("attachments:")).name.casefold()
    folded = title.casefold()
    return bool(folded) and (folded in (name, Path(name).stem) or bool(_FILE_SUFFIX.search(folded)))


def attachment_title(parent_title: str, own_title: str, path: str) -> str:
    """The title of a parent's second (third, …) PDF: the parent's title and what this file is, so a
    supplement is not a second row with the paper's own title."""
    own = " ".join(own_title.split())
    if not own or own.casefold() in _GENERIC_ATTACHMENT_TITLES or own == parent_title:
        own = Path(path.removeprefix("storage:")).stem or "attachment"
    return f"{parent_title} — {own}" if parent_title else own


def _attachment_file(data_folder: Path, key: str, link_mode: int | None, path: str) -> tuple[Path | None, str]:
    if link_mode == _LINKED_URL or not path:
        return None, "Zotero keeps only a link to this PDF, no file"
    if path.startswith("storage:"):
        name = path.removeprefix("storage:")
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            return None, f"the attachment's file name {name!r} is not a plain file name"
        file = data_folder / "storage" / key / name
    elif path.startswith("attachments:"):
        return None, ("the PDF is linked relative to Zotero's base directory (Settings › Advanced › Files and "
                      "Folders); add that folder to Quire directly")
    else:
        file = Path(path)
    if not file.is_file():
        return None, f"the PDF is not on this computer ({file}); let Zotero download it, then import again"
    return file, ""


def _year(date: str) -> int | None:
    match = _YEAR.search(date)
    return int(match.group(1)) if match else None


def import_zotero(library: Library, add_documents: Callable[[list[Path]], Iterable[IngestResult]], folder: Path,
                  progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> ZoteroReport:
    """Add every PDF of the Zotero library at ``folder`` with its Zotero metadata and collections."""
    from engine.store.edits import collections_from, import_metadata, set_collections

    database = zotero_database(folder)
    found = read_zotero_library(folder)
    items = found.items
    report = ZoteroReport(notice=found.notice)
    for trashed in found.trashed:
        known_item = _known(library, f"{database.resolve()}#{trashed}")
        if known_item is not None:
            report.trashed.append((f"{database.resolve()}#{trashed}", known_item[0]))
    first_item_of: dict[str, tuple[str, set[str]]] = {}  # doc id -> (the first item here with it, collections)
    for done, item in enumerate(items):
        if cancel is not None:
            cancel.check()
        name = item.title or item.key
        progress(Progress("zotero", done, len(items), name))
        if item.pdf is None:
            report.failed.append((name, item.problem))
            continue
        identity = f"{database.resolve()}#{item.library_id}/{item.key}"
        known = _known(library, identity)
        results = list(add_documents([item.pdf]))
        result = results[-1] if results else IngestResult(str(item.pdf), Outcome.FAILED, reason="nothing was read")
        report.results.append(result)
        if result.outcome == Outcome.FAILED or not result.doc_id:
            report.failed.append((name, result.reason or "it could not be read"))
            continue
        unchanged = known == (result.doc_id, item.modified) and result.outcome == Outcome.UNCHANGED
        _remember(library, identity, result.doc_id, item)
        if result.doc_id in first_item_of:
            # The same file under two Zotero items is one paper: the first item's details stay, and
            # the paper is filed in both items' collections.
            first, collections = first_item_of[result.doc_id]
            collections.update(item.collections)
            set_collections(library, result.doc_id, collections, COLLECTION_SOURCE)
            if unchanged:
                report.unchanged += 1
            else:
                report.notes.append((name, f"the same PDF as “{first}”: one paper in the library, with that "
                                           "item's details and both items' collections"))
                report.merged += 1
            continue
        first_item_of[result.doc_id] = (name, set(item.collections))
        if unchanged:
            report.unchanged += 1
            # A collection renamed, added or emptied in Zotero leaves the item's own modification time as it was.
            if collections_from(library, result.doc_id, COLLECTION_SOURCE) != sorted(item.collections):
                set_collections(library, result.doc_id, item.collections, COLLECTION_SOURCE)
                report.collections_changed += 1
            continue
        metadata, problems = _usable_metadata(item)
        # Kept apart from the user's corrections: an edit made in Quire outlives importing again.
        import_metadata(library, result.doc_id, COLLECTION_SOURCE, metadata)
        report.notes.extend((name, problem) for problem in problems)
        set_collections(library, result.doc_id, item.collections, COLLECTION_SOURCE)
        if known is None and result.outcome == Outcome.ADDED:
            report.added += 1
        elif known is None and result.outcome == Outcome.UNCHANGED:
            report.merged += 1  # the library held this PDF already
        else:
            report.updated += 1
    progress(Progress("zotero", len(items), len(items), "done"))
    return report


def _remember(library: Library, identity: str, doc_id: str, item: ZoteroItem) -> None:
    """Which paper a Zotero item became, and as of which Zotero modification, for the next import."""
    with library.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO zotero_items(item, doc_id, modified, file_path) VALUES (?,?,?,?)",
                     (identity, doc_id, item.modified, str(item.pdf)))


def _usable_metadata(item: ZoteroItem) -> tuple[dict[str, object], list[str]]:
    """The item's metadata that can be stored, and why any field was left out.

    Zotero accepts any text in its fields (a DOI of "n/a"); one such item must cost that field, with
    a note naming it, not the whole import.
    """
    from engine.store.edits import MetadataError, clean_metadata

    fields: dict[str, object] = {"title": item.title or None, "authors": item.authors or None, "year": item.year,
                                 "doi": item.doi or None, "venue": item.venue or None}
    usable: dict[str, object] = {}
    problems: list[str] = []
    for name, value in fields.items():
        try:
            clean_metadata(**{name: value})  # type: ignore[arg-type]
        except MetadataError as exc:
            problems.append(f"added without its {name}: {exc}")
            continue
        usable[name] = value
    return usable, problems


def _known(library: Library, identity: str) -> tuple[str, str] | None:
    """The (doc_id, Zotero modification time) an earlier import stored for this item, if any."""
    with library.transaction() as conn:
        row = conn.execute("SELECT doc_id, modified FROM zotero_items WHERE item=?", (identity,)).fetchone()
    return (str(row[0]), str(row[1])) if row else None
