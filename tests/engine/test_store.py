"""The catalog: de-duplication, re-ingest, updates, removal, schema versions and integrity.

Row counts are read straight from SQLite, so a leftover passage, rectangle, page or search entry
fails a test even when the public API would not show it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf

from engine.errors import Cancelled, StoreError
from engine.importer import IngestResult, Outcome
from engine.progress import CancelToken, Progress
from engine.service import Engine
from engine.store import Library
from engine.store.schema import SCHEMA_VERSION, Migration, current_version, ensure_schema
from engine.types import DocumentStatus


def rows_of(engine: Engine, doc_id: str) -> dict[str, int]:
    """How many rows each table holds for one document."""
    conn = engine.library.db.conn
    passage_rowids = "SELECT rowid FROM passages WHERE doc_id = :doc"
    queries = {
        "documents": "SELECT COUNT(*) FROM documents WHERE id = :doc",
        "files": "SELECT COUNT(*) FROM files WHERE doc_id = :doc",
        "pages": "SELECT COUNT(*) FROM pages WHERE doc_id = :doc",
        "passages": "SELECT COUNT(*) FROM passages WHERE doc_id = :doc",
        "rects": f"SELECT COUNT(*) FROM passage_rects WHERE passage_rowid IN ({passage_rowids})",
        "fts": f"SELECT COUNT(*) FROM passages_fts WHERE rowid IN ({passage_rowids})",
    }
    return {table: conn.execute(sql, {"doc": doc_id}).fetchone()[0] for table, sql in queries.items()}


def table_sizes(engine: Engine) -> dict[str, int]:
    conn = engine.library.db.conn
    return {table: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("documents", "files", "pages", "passages", "passage_rects", "passages_fts")}


def search(engine: Engine, word: str) -> int:
    """Passages whose full-text entry matches ``word``."""
    return engine.library.db.conn.execute(
        "SELECT COUNT(*) FROM passages_fts WHERE passages_fts MATCH ?", (word,)).fetchone()[0]


def rewrite(path: Path, topic: str) -> None:
    """Write a different PDF over ``path``, with an mtime that surely differs from the old one."""
    old = path.stat()
    text_pdf(path, [paper_text(topic, paragraphs=5), paper_text(f"{topic} continued")])
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns + 2_000_000_000))


# --- de-duplication and re-ingest ---------------------------------------------------------


def test_same_pdf_under_two_names_is_one_document(engine: Engine, tmp_path: Path, real_paper: Path) -> None:
    original = tmp_path / "paper.pdf"
    shutil.copyfile(real_paper, original)
    copy = tmp_path / "paper (1).pdf"
    shutil.copyfile(real_paper, copy)

    first, second = engine.add_documents([original, copy])

    assert first.outcome == Outcome.ADDED
    assert second.outcome == Outcome.UNCHANGED
    assert second.doc_id == first.doc_id
    assert "same file as" in second.reason and str(original.resolve()) in second.reason
    [document] = engine.documents()
    assert document.passage_count == first.passages > 0
    assert rows_of(engine, document.id)["files"] == 2  # both paths are known, so neither is parsed again
    assert engine.library.check_integrity() == []


def test_unchanged_file_is_not_parsed_again(engine: Engine, tmp_path: Path) -> None:
    path = text_pdf(tmp_path / "paper.pdf", [paper_text("stability")])
    [first] = engine.add_documents([path])
    before = engine.document(first.doc_id)

    [again] = engine.add_documents([path])
    os.utime(path)  # touched (a backup tool, a sync client) but the same bytes
    [touched] = engine.add_documents([path])

    assert (first.outcome, again.outcome, touched.outcome) == (Outcome.ADDED, Outcome.UNCHANGED, Outcome.UNCHANGED)
    assert again.doc_id == touched.doc_id == first.doc_id
    assert again.passages == first.passages
    assert engine.document(first.doc_id).added_at == before.added_at  # not rewritten
    assert engine.library.check_integrity() == []


def test_changed_file_at_same_path_is_updated_and_old_passages_are_gone(engine: Engine, tmp_path: Path) -> None:
    path = text_pdf(tmp_path / "draft.pdf", [paper_text("photosynthesis")])
    [old] = engine.add_documents([path])
    assert search(engine, "photosynthesis") == old.passages > 0

    rewrite(path, "thermodynamics")
    [new] = engine.add_documents([path])

    assert new.outcome == Outcome.UPDATED
    assert new.doc_id != old.doc_id
    assert [d.id for d in engine.documents()] == [new.doc_id]
    assert set(rows_of(engine, old.doc_id).values()) == {0}
    assert search(engine, "photosynthesis") == 0
    assert search(engine, "thermodynamics") == new.passages > 0
    assert engine.document(new.doc_id).path == str(path.resolve())
    assert engine.library.check_integrity() == []


def test_updating_one_copy_keeps_the_document_the_other_copy_holds(engine: Engine, tmp_path: Path) -> None:
    mine = text_pdf(tmp_path / "mine.pdf", [paper_text("glaciers")])
    shared = tmp_path / "shared-folder-copy.pdf"
    shutil.copyfile(mine, shared)
    original, _ = engine.add_documents([mine, shared])

    rewrite(mine, "volcanoes")
    [updated] = engine.add_documents([mine])

    assert updated.outcome == Outcome.UPDATED
    kept = engine.document(original.doc_id)  # the copy still holds the old version
    assert kept.path == str(shared.resolve())
    assert kept.passage_count == original.passages
    assert search(engine, "glaciers") == original.passages
    [again] = engine.add_documents([shared])
    assert again.outcome == Outcome.UNCHANGED
    assert len(engine.documents()) == 2
    assert engine.library.check_integrity() == []


def test_file_overwritten_by_another_known_paper_drops_its_old_version(engine: Engine, tmp_path: Path) -> None:
    draft = text_pdf(tmp_path / "draft.pdf", [paper_text("earthquakes")])
    final = text_pdf(tmp_path / "final.pdf", [paper_text("tsunamis")])
    old, kept = engine.add_documents([draft, final])

    shutil.copyfile(final, draft)  # "save as" over the draft with the final version's bytes
    [result] = engine.add_documents([draft])

    assert result.outcome == Outcome.UPDATED
    assert result.doc_id == kept.doc_id
    assert [d.id for d in engine.documents()] == [kept.doc_id]
    assert set(rows_of(engine, old.doc_id).values()) == {0}
    assert search(engine, "earthquakes") == 0
    assert engine.library.check_integrity() == []


# --- removal ------------------------------------------------------------------------------


def test_remove_deletes_passages_rects_pages_files_and_search_entries(engine: Engine, tmp_path: Path,
                                                                      real_paper: Path) -> None:
    keep = text_pdf(tmp_path / "keep.pdf", [paper_text("kept"), paper_text("kept again")])
    kept, removed = engine.add_documents([keep, real_paper])
    before = rows_of(engine, removed.doc_id)
    assert all(before.values()), before  # every table had rows to delete
    kept_rows = rows_of(engine, kept.doc_id)

    document = engine.remove(removed.doc_id[:6])  # a unique prefix is enough

    assert document.id == removed.doc_id
    assert set(rows_of(engine, removed.doc_id).values()) == {0}
    assert rows_of(engine, kept.doc_id) == kept_rows
    assert table_sizes(engine) == {"documents": 1, "files": 1, **{
        table: kept_rows[key] for table, key in
        (("pages", "pages"), ("passages", "passages"), ("passage_rects", "rects"), ("passages_fts", "fts"))}}
    [again] = engine.add_documents([real_paper])  # removed means forgotten: adding it again parses it
    assert again.outcome == Outcome.ADDED
    assert engine.library.check_integrity() == []


# --- atomic writes ------------------------------------------------------------------------


def test_cancel_mid_document_leaves_no_half_document(engine: Engine, tmp_path: Path) -> None:
    done = text_pdf(tmp_path / "a-done.pdf", [paper_text("finished")])
    long = text_pdf(tmp_path / "b-long.pdf", [paper_text(f"chapter {n}") for n in range(8)])
    cancel = CancelToken()

    def cancel_on_page_three(progress: Progress) -> None:
        if progress.stage == "parse" and progress.label == long.name and progress.done >= 3:
            cancel.cancel()

    results: list[IngestResult] = []
    with pytest.raises(Cancelled):
        results.extend(engine.add_documents([done, long], progress=cancel_on_page_three, cancel=cancel))

    assert [r.outcome for r in results] == [Outcome.ADDED]
    assert [d.id for d in engine.documents()] == [results[0].doc_id]
    assert table_sizes(engine)["passages"] == results[0].passages
    assert engine.library.check_integrity() == []
    [resumed] = engine.add_documents([long])
    assert resumed.outcome == Outcome.ADDED


# --- schema versions and migrations -------------------------------------------------------


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), isolation_level=None)


def test_catalog_from_a_newer_quire_is_refused(tmp_path: Path) -> None:
    with Engine(home=tmp_path) as engine:
        catalog = engine.paths.catalog
    conn = _connect(catalog)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.close()

    with pytest.raises(StoreError, match="newer Quire") as refused:
        Engine(home=tmp_path)
    assert "update Quire" in str(refused.value)
    conn = _connect(catalog)  # refused, not damaged or downgraded
    assert current_version(conn) == SCHEMA_VERSION + 1
    conn.close()


def test_migration_hook_upgrades_an_old_catalog_once(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "library.db")
    assert ensure_schema(conn) == SCHEMA_VERSION
    conn.execute("INSERT INTO meta(key, value) VALUES ('owner', 'kept across the upgrade')")
    calls: list[int] = []

    def add_notes_column(db: sqlite3.Connection) -> None:
        calls.append(current_version(db))
        db.execute("ALTER TABLE documents ADD COLUMN notes TEXT NOT NULL DEFAULT ''")

    migrations: dict[int, Migration] = {SCHEMA_VERSION: add_notes_column}
    assert ensure_schema(conn, migrations, target=SCHEMA_VERSION + 1) == SCHEMA_VERSION + 1
    assert ensure_schema(conn, migrations, target=SCHEMA_VERSION + 1) == SCHEMA_VERSION + 1

    assert calls == [SCHEMA_VERSION]  # ran once, from the old version
    assert current_version(conn) == SCHEMA_VERSION + 1
    columns = [row[1] for row in conn.execute("PRAGMA table_info(documents)")]
    assert "notes" in columns
    assert conn.execute("SELECT value FROM meta WHERE key='owner'").fetchone() == ("kept across the upgrade",)
    conn.close()


def test_new_catalog_is_created_then_migrated(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "library.db")
    steps: list[int] = []

    def upgrade_from(version: int) -> Migration:
        return lambda _: steps.append(version)

    migrations = {version: upgrade_from(version) for version in range(1, 4)}

    assert ensure_schema(conn, migrations, target=4) == 4

    assert steps == [1, 2, 3]
    assert current_version(conn) == 4
    conn.close()


def test_failed_migration_rolls_back_completely(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "library.db")
    ensure_schema(conn)

    def half_done(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE tags (name TEXT)")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        ensure_schema(conn, {SCHEMA_VERSION: half_done}, target=SCHEMA_VERSION + 1)

    assert current_version(conn) == SCHEMA_VERSION
    assert conn.execute("SELECT name FROM sqlite_master WHERE name='tags'").fetchone() is None
    assert not conn.in_transaction
    conn.close()


def test_missing_migration_is_a_store_error(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "library.db")
    ensure_schema(conn)

    with pytest.raises(StoreError, match=f"No migration from library schema {SCHEMA_VERSION}"):
        ensure_schema(conn, {}, target=SCHEMA_VERSION + 1)
    assert current_version(conn) == SCHEMA_VERSION
    conn.close()


def test_damaged_catalog_file_is_a_store_error_that_says_what_to_do(tmp_path: Path) -> None:
    catalog = tmp_path / "library.db"
    catalog.write_bytes(b"this is not a database, it was overwritten by accident" * 100)

    with pytest.raises(StoreError, match="move it aside and ingest your PDFs again"):
        Library(catalog)


# --- integrity ----------------------------------------------------------------------------


def test_integrity_holds_after_a_busy_session_and_catches_damage(engine: Engine, tmp_path: Path,
                                                                  real_paper: Path) -> None:
    papers = [text_pdf(tmp_path / f"{topic}.pdf", [paper_text(topic)]) for topic in ("alpha", "beta", "gamma")]
    shutil.copyfile(real_paper, tmp_path / "real.pdf")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n")
    shutil.copyfile(papers[0], tmp_path / "alpha copy.pdf")
    list(engine.add_documents([tmp_path]))
    rewrite(papers[1], "delta")
    list(engine.add_documents([tmp_path]))
    gamma = engine.library.file_record(str(papers[2].resolve()))
    assert gamma is not None
    engine.remove(gamma.doc_id)
    list(engine.add_documents([tmp_path]))

    assert engine.library.check_integrity() == []
    statuses = sorted(d.status.value for d in engine.documents())
    assert statuses == [DocumentStatus.FAILED, *[DocumentStatus.INDEXED] * 4]

    # The check is not vacuous: a passage lost behind the catalog's back is reported.
    engine.library.db.conn.execute("DELETE FROM passages WHERE rowid = (SELECT MIN(rowid) FROM passages)")
    problems = engine.library.check_integrity()
    assert any("passages stored" in problem for problem in problems)
    assert any("search entries without a passage" in problem for problem in problems)
