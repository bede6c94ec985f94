"""BM25 from precomputed postings: FTS5's own ranking without scoring every matching row.

``ORDER BY bm25(...) LIMIT k`` makes FTS5 score every row that holds any OR'd query word; at
100k passages that is tens of thousands of rows per query (~40-110 ms on a 2-core laptop). A
datastore never changes once imported, so its BM25 can be precomputed: for every word, the
passages that hold it and the word's BM25 contribution to each ("impact"). A query then adds up a
few memory-mapped slices with NumPy and takes the top k (a few ms at 100k passages).

The postings are read out of the FTS5 table itself (``fts5vocab``), so words, stems and counts
are exactly FTS5's, and the impacts follow FTS5's ``bm25()`` (k1 = 1.2, b = 0.75, IDF floored
at 1e-6) with equal column weights (a word counts the same in the title and the text): scores
match ``-bm25(passages_fts, 1, 1)`` to float32 precision.

Files, in one folder that is replaced whole (build beside it, then rename), so a crash leaves
either the old folder, the new one or none; ``meta.json`` records what the postings were built
from, and a source whose passages changed since simply falls back to FTS5 until they are rebuilt.
"""

from __future__ import annotations

import bisect
import itertools
import json
import logging
import os
import shutil
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.retrieve.fts import FtsStemmer, quoted_words, uncommon_words

log = logging.getLogger(__name__)

FORMAT = 1
# FTS5's bm25() constants (fts5_aux.c), fixed there. Not tuned, so not in engine/tuning.py: the postings
# must score exactly as FTS5 does, because a source whose postings are stale falls back to FTS5.
K1 = 1.2
B = 0.75
MIN_IDF = 1e-6
_FETCH_ROWS = 200_000
# (file name, dtype) of each array; sizes are checked against meta.json when loading.
_ARRAYS = {"doc_rowids": np.int64, "term_offsets": np.int64, "term_starts": np.int64,
           "terms": np.uint8, "postings_docs": np.int32, "postings_impacts": np.float32}


@dataclass(frozen=True)
class PostingsStamp:
    """What the postings were built from: a source's passage count and highest rowid."""

    passages: int
    last_rowid: int


class PostingsError(Exception):
    """The postings folder is missing, from another format, or damaged (search falls back to FTS5)."""


class Bm25Postings:
    """Memory-mapped BM25 postings of one FTS5 table; read-only, safe to share between threads."""

    def __init__(self, folder: Path) -> None:
        try:
            meta = json.loads((folder / "meta.json").read_text())
        except (OSError, ValueError) as exc:
            raise PostingsError(f"no readable postings in {folder} ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise PostingsError(f"postings in {folder} are of another format")
        try:
            self.stamp = PostingsStamp(int(meta["passages"]), int(meta["last_rowid"]))
            sizes = {name: int(meta["sizes"][name]) for name in _ARRAYS}
        except (KeyError, TypeError, ValueError):
            raise PostingsError(f"the postings description in {folder} is incomplete") from None
        arrays = {}
        for name, dtype in _ARRAYS.items():
            path = folder / f"{name}.bin"
            expected = sizes[name] * np.dtype(dtype).itemsize
            if not path.is_file() or path.stat().st_size != expected:
                raise PostingsError(f"{path} is missing or has the wrong size")
            arrays[name] = np.memmap(path, dtype=dtype, mode="r") if expected else np.zeros(0, dtype)
        self.doc_rowids = arrays["doc_rowids"]
        self._term_offsets = arrays["term_offsets"]
        self._terms = _Terms(arrays["terms"], arrays["term_starts"])
        self._docs = arrays["postings_docs"]
        self._impacts = arrays["postings_impacts"]
        if len(self._term_offsets) != len(self._terms) + 1 or len(self.doc_rowids) != self.stamp.passages:
            raise PostingsError(f"the postings in {folder} do not fit together")

    @property
    def rows(self) -> int:
        return len(self.doc_rowids)

    def frequency(self, stem: str) -> int:
        """How many passages hold ``stem`` (0 for a word the table has never seen)."""
        term = self._terms.find(stem)
        return 0 if term is None else int(self._term_offsets[term + 1] - self._term_offsets[term])

    def stems_between(self, low: str, high: str) -> dict[str, int]:
        """The stems from ``low`` (included) to ``high`` (excluded), each with how many passages hold it."""
        first = bisect.bisect_left(self._terms, low.encode())  # type: ignore[call-overload]
        last = bisect.bisect_left(self._terms, high.encode())  # type: ignore[call-overload]
        if last <= first:
            return {}
        counts = np.diff(self._term_offsets[first:last + 1]).tolist()
        return {term.decode(): n for term, n in zip(self._terms.between(first, last), counts, strict=True)}

    def search(self, stems: Sequence[str], k: int) -> list[tuple[int, float]]:
        """The ``k`` best (rowid, BM25 score) for an OR of ``stems``, best first, ties by rowid.

        A stem given twice counts twice, as FTS5 scores a repeated phrase.
        """
        slices = []
        for stem in stems:
            term = self._terms.find(stem)
            if term is not None:
                slices.append(slice(int(self._term_offsets[term]), int(self._term_offsets[term + 1])))
        if k <= 0 or not slices:
            return []
        docs = np.concatenate([self._docs[s] for s in slices])
        impacts = np.concatenate([self._impacts[s] for s in slices])
        scores = np.bincount(docs, weights=impacts, minlength=self.rows)
        matched = np.flatnonzero(scores)
        if len(matched) > k:
            matched = matched[np.argpartition(-scores[matched], k - 1)[:k]]
            # Rows tied with the k-th score may lie on either side of the cut: take all of them,
            # so the tie order below (by rowid, as the FTS5 query orders ties) decides.
            matched = np.flatnonzero(scores >= scores[matched].min())
        order = np.lexsort((self.doc_rowids[matched], -scores[matched]))[:k]
        return [(int(self.doc_rowids[i]), float(scores[i])) for i in matched[order]]


def search_fts_query(postings: Bm25Postings, stemmer: FtsStemmer, fts_query: str, k: int
                     ) -> list[tuple[int, float]] | None:
    """What FTS5 would return for an OR query of :func:`~engine.retrieve.fts.build_fts_query`, with
    the same common-word pruning; None when the postings cannot answer it (an AND query, a word
    that is not one token)."""
    if " AND " in fts_query:
        return None
    words = quoted_words(fts_query)
    stems = stemmer.stems(words) if words else None
    if not stems:
        return None
    return postings.search(uncommon_words(stems, stems, postings.frequency, postings.rows), k)


class _Terms:
    """The sorted vocabulary as one UTF-8 blob plus start offsets; binary-searched as bytes (FTS5's order)."""

    def __init__(self, blob: np.ndarray, starts: np.ndarray) -> None:
        self._blob = blob
        self._starts = starts

    def __len__(self) -> int:
        return max(0, len(self._starts) - 1)

    def __getitem__(self, index: int) -> bytes:
        return self._blob[int(self._starts[index]):int(self._starts[index + 1])].tobytes()

    def between(self, first: int, last: int) -> list[bytes]:
        """Terms ``first`` to ``last`` (excluded), read with one slice of the blob."""
        starts = (self._starts[first:last + 1] - self._starts[first]).tolist()
        blob = self._blob[int(self._starts[first]):int(self._starts[last])].tobytes()
        return [blob[a:b] for a, b in itertools.pairwise(starts)]

    def find(self, term: str) -> int | None:
        key = term.encode()
        index = bisect.bisect_left(self, key)  # type: ignore[call-overload]  # a Sequence of bytes
        return index if index < len(self) and self[index] == key else None


def build_postings(reading_connection: Callable[[], AbstractContextManager[sqlite3.Connection]], folder: Path,
                   stamp: PostingsStamp, table: str = "passages_fts", progress: ProgressCallback = no_progress,
                   cancel: CancelToken | None = None) -> Bm25Postings:
    """Read ``table``'s postings through the store's own read-only connection and write them to ``folder``.

    ``folder`` is replaced whole. The store that owns the database opens the connection, so this
    module never opens a database by path.
    """
    if not table.replace("_", "").isalnum():
        raise ValueError(f"not a table name: {table!r}")
    staging = folder.with_name(folder.name + ".building")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        with reading_connection() as conn:
            sizes = _write_postings(conn, table, staging, progress, cancel)
        meta = {"format": FORMAT, "passages": stamp.passages, "last_rowid": stamp.last_rowid, "sizes": sizes}
        (staging / "meta.json").write_text(json.dumps(meta))
        for path in staging.iterdir():
            _fsync(path)
        _replace_folder(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Bm25Postings(folder)


def _write_postings(conn: sqlite3.Connection, table: str, out: Path, progress: ProgressCallback,
                    cancel: CancelToken | None) -> dict[str, int]:
    """Write every array of the postings into ``out``; returns their lengths (for ``meta.json``)."""
    conn.execute(f"CREATE VIRTUAL TABLE temp.rows_vocab USING fts5vocab(main, {table}, 'row')")
    conn.execute(f"CREATE VIRTUAL TABLE temp.instance_vocab USING fts5vocab(main, {table}, 'instance')")
    doc_rowids = np.array([row[0] for row in conn.execute(f"SELECT rowid FROM {table} ORDER BY rowid")],
                          dtype=np.int64)
    terms = [row[0] for row in conn.execute("SELECT term FROM temp.rows_vocab")]
    encoded = [term.encode() for term in terms]
    if any(a >= b for a, b in itertools.pairwise(encoded)):
        raise PostingsError("FTS5 listed its vocabulary out of byte order")  # binary search would miss words
    progress(Progress("bm25", 0, max(1, len(terms)), f"BM25 postings: {len(terms):,} distinct words"))
    postings, per_term, lengths = _write_runs(conn, terms, doc_rowids, out, progress, cancel)
    _write_impacts(out, postings, per_term, lengths, cancel)
    term_offsets = np.r_[0, np.cumsum(per_term)].astype(np.int64)
    term_starts = np.r_[0, np.cumsum([len(e) for e in encoded])].astype(np.int64)
    doc_rowids.tofile(out / "doc_rowids.bin")
    term_offsets.tofile(out / "term_offsets.bin")
    term_starts.tofile(out / "term_starts.bin")
    (out / "terms.bin").write_bytes(b"".join(encoded))
    progress(Progress("bm25", len(terms), max(1, len(terms)), f"BM25 postings: {postings:,} entries"))
    return {"doc_rowids": len(doc_rowids), "term_offsets": len(term_offsets), "term_starts": len(term_starts),
            "terms": int(term_starts[-1]), "postings_docs": postings, "postings_impacts": postings}


def _write_runs(conn: sqlite3.Connection, terms: Sequence[str], doc_rowids: np.ndarray, out: Path,
                progress: ProgressCallback, cancel: CancelToken | None) -> tuple[int, np.ndarray, np.ndarray]:
    """Pass 1: FTS5's token instances, in (term, passage) order, as (term, passage, count) runs.

    The runs go to temporary files; returns how many there are, each term's passage count and
    each passage's length in tokens.
    """
    term_ids = {term: number for number, term in enumerate(terms)}
    per_term = np.zeros(len(terms), dtype=np.int64)
    lengths = np.zeros(len(doc_rowids), dtype=np.float64)
    pending: tuple[int, int, int] | None = None  # the last run of a batch may go on in the next
    files = {"docs": (out / "docs.tmp").open("wb"), "terms": (out / "terms.tmp").open("wb"),
             "counts": (out / "counts.tmp").open("wb")}

    def write(run_terms: np.ndarray, run_docs: np.ndarray, run_counts: np.ndarray) -> int:
        run_docs.astype(np.int32).tofile(files["docs"])
        run_terms.astype(np.int32).tofile(files["terms"])
        run_counts.astype(np.float32).tofile(files["counts"])
        np.add.at(per_term, run_terms, 1)
        np.add.at(lengths, run_docs, run_counts)
        return len(run_terms)

    runs = 0
    try:
        cursor = conn.execute("SELECT term, doc FROM temp.instance_vocab")
        while batch := cursor.fetchmany(_FETCH_ROWS):
            if cancel is not None:
                cancel.check()
            tids = np.fromiter((term_ids[term] for term, _ in batch), dtype=np.int64, count=len(batch))
            docs = np.searchsorted(doc_rowids, np.fromiter((doc for _, doc in batch), dtype=np.int64,
                                                           count=len(batch)))
            starts = np.flatnonzero(np.r_[True, (tids[1:] != tids[:-1]) | (docs[1:] != docs[:-1])])
            run_terms, run_docs = tids[starts], docs[starts]
            run_counts = np.diff(np.r_[starts, len(batch)])
            if pending is not None:
                if (run_terms[0], run_docs[0]) == pending[:2]:
                    run_counts[0] += pending[2]
                else:
                    run_terms = np.r_[pending[0], run_terms]
                    run_docs = np.r_[pending[1], run_docs]
                    run_counts = np.r_[pending[2], run_counts]
            pending = (int(run_terms[-1]), int(run_docs[-1]), int(run_counts[-1]))
            runs += write(run_terms[:-1], run_docs[:-1], run_counts[:-1])
            progress(Progress("bm25", int(run_terms[-1]), max(1, len(terms)), "reading BM25 postings"))
        if pending is not None:
            runs += write(np.array([pending[0]]), np.array([pending[1]]), np.array([pending[2]]))
    finally:
        for handle in files.values():
            handle.close()
    return runs, per_term, lengths


def _write_impacts(out: Path, postings: int, per_term: np.ndarray, lengths: np.ndarray,
                   cancel: CancelToken | None) -> None:
    """Pass 2: each run's BM25 impact, now that every passage's length (and so the average) is known."""
    rows = max(1, len(lengths))
    average_length = max(lengths.sum() / rows, 1e-9)
    idf = bm25_idf(rows, per_term)
    docs = np.memmap(out / "docs.tmp", dtype=np.int32, mode="r") if postings else np.zeros(0, np.int32)
    terms = np.memmap(out / "terms.tmp", dtype=np.int32, mode="r") if postings else np.zeros(0, np.int32)
    counts = np.memmap(out / "counts.tmp", dtype=np.float32, mode="r") if postings else np.zeros(0, np.float32)
    with (out / "postings_impacts.bin").open("wb") as impacts:
        for start in range(0, postings, 4 * _FETCH_ROWS):
            if cancel is not None:
                cancel.check()
            part = slice(start, start + 4 * _FETCH_ROWS)
            tf = counts[part].astype(np.float64)
            norm = K1 * (1 - B + B * lengths[docs[part]] / average_length)
            (idf[terms[part]] * tf * (K1 + 1) / (tf + norm)).astype(np.float32).tofile(impacts)
    del docs, terms, counts  # unmap before renaming and deleting the files
    (out / "docs.tmp").rename(out / "postings_docs.bin")
    (out / "terms.tmp").unlink()
    (out / "counts.tmp").unlink()


def _replace_folder(staging: Path, folder: Path) -> None:
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    staging.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    _fsync(folder.parent)


def _fsync(path: Path) -> None:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if path.is_dir() else 0)
    try:
        handle = os.open(path, flags)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass  # some file systems cannot fsync a directory
    finally:
        os.close(handle)


def bm25_idf(rows: int, frequencies: np.ndarray) -> np.ndarray:
    """FTS5's IDF of words that ``frequencies`` of ``rows`` passages hold (floored at ``MIN_IDF``)."""
    idf = np.log((rows - frequencies + 0.5) / (frequencies + 0.5))
    return np.where(idf <= 0, MIN_IDF, idf)
