"""Precomputed BM25 postings rank exactly as FTS5's bm25() does, and fall back safely when damaged or stale."""

from __future__ import annotations

import gzip
import itertools
import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, closing
from pathlib import Path

import numpy as np
import pytest

from engine.datastore.bundled import bundled_datastore
from engine.datastore.files import POSTINGS_FOLDER
from engine.embed import HashingEmbedder
from engine.errors import Cancelled
from engine.progress import CancelToken, Progress
from engine.retrieve.fts import (
    FtsStemmer,
    bm25_expression,
    build_fts_query,
    quoted_words,
)
from engine.retrieve.postings import Bm25Postings, PostingsError, PostingsStamp, bm25_idf, build_postings
from engine.service import Engine
from engine.store.vocabulary import TOKENIZER, FtsVocabulary, vocabulary_table_sql

QUESTIONS = [
    "How do residual networks make very deep image classifiers trainable?",
    "What methods reduce catastrophic forgetting in continual learning?",
    "Which techniques improve named entity recognition in scientific text?",
    "How is semantic segmentation evaluated on street scenes?",
    "graph neural networks for molecule property prediction",
    "attention attention transformer translation",  # a repeated word counts twice in FTS5 too
]


def reading(path: Path) -> Callable[[], AbstractContextManager[sqlite3.Connection]]:
    """What a store hands the postings builder: its own read-only connection, closed after."""
    return lambda: closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True))


def sample_records(count: int) -> list[dict[str, object]]:
    with gzip.open(bundled_datastore(), "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in itertools.islice(handle, count)]


@pytest.fixture(scope="module")
def fts_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A contentless FTS5 table (as datastores have) of real CS abstracts and paper text."""
    path = tmp_path_factory.mktemp("fts") / "fts.db"
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE VIRTUAL TABLE passages_fts USING fts5(title, text, content='', tokenize='{TOKENIZER}')")
    rows = [(r["title"], str(r["text"])[:2000]) for r in sample_records(300)]
    rows += [rows[0], rows[0]]  # exact duplicates: equal scores, ties broken by rowid
    conn.executemany("INSERT INTO passages_fts(title, text) VALUES (?, ?)", rows)
    conn.commit()
    conn.close()
    return path


def fts5_ranking(db: Path, fts_query: str, k: int) -> list[tuple[int, float]]:
    score = bm25_expression("passages_fts")
    with sqlite3.connect(db) as conn:
        return conn.execute(f"SELECT rowid, -{score} FROM passages_fts WHERE passages_fts MATCH ? "
                            f"ORDER BY {score}, rowid LIMIT ?", (fts_query, k)).fetchall()


def stamp_of(db: Path) -> PostingsStamp:
    with sqlite3.connect(db) as conn:
        count, last = conn.execute("SELECT count(*), max(rowid) FROM passages_fts").fetchone()
    return PostingsStamp(count, last)


@pytest.mark.parametrize("question", QUESTIONS)
def test_postings_rank_exactly_as_fts5_bm25(fts_db: Path, tmp_path: Path, question: str) -> None:
    postings = build_postings(reading(fts_db), tmp_path / "bm25", stamp_of(fts_db))
    fts_query = build_fts_query(question)
    stems = FtsStemmer().stems(quoted_words(fts_query))
    assert stems is not None
    expected = fts5_ranking(fts_db, fts_query, 40)
    got = postings.search(stems, 40)
    assert expected, "the question should match something in the sample"
    assert [rowid for rowid, _ in got] == [rowid for rowid, _ in expected]
    for (_, ours), (_, theirs) in zip(got, expected, strict=True):
        assert ours == pytest.approx(theirs, rel=1e-5)


def test_document_frequency_and_idf_follow_fts5(fts_db: Path, tmp_path: Path) -> None:
    postings = build_postings(reading(fts_db), tmp_path / "bm25", stamp_of(fts_db))
    with sqlite3.connect(fts_db) as conn:
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, passages_fts, 'row')")
        network_docs = conn.execute("SELECT doc FROM temp.v WHERE term = 'network'").fetchone()[0]
    assert postings.frequency("network") == network_docs > 0
    assert postings.frequency("zzzunseenword") == 0
    assert postings.rows == 302
    # FTS5 floors the IDF of a word nearly every row holds.
    assert bm25_idf(302, np.array([300]))[0] == pytest.approx(1e-6)


def test_a_range_of_stems_matches_fts5vocab(fts_db: Path, tmp_path: Path) -> None:
    # What spelling correction reads: the same stems and counts from the postings as from FTS5.
    postings = build_postings(reading(fts_db), tmp_path / "bm25", stamp_of(fts_db))
    with sqlite3.connect(fts_db) as conn:
        conn.execute(vocabulary_table_sql())
        for low, high in (("c", "d"), ("net", "neu"), ("network", "network\0"), ("zzz", "zzzz"), ("a", "{")):
            expected = FtsVocabulary(lambda sql, params: conn.execute(sql, params).fetchall()).stems_between(low, high)
            assert postings.stems_between(low, high) == expected
            assert expected or low == "zzz"


def test_unknown_words_and_empty_queries_find_nothing(fts_db: Path, tmp_path: Path) -> None:
    postings = build_postings(reading(fts_db), tmp_path / "bm25", stamp_of(fts_db))
    assert postings.search(["zzzunseenword"], 10) == []
    assert postings.search([], 10) == []
    assert postings.search(["network"], 0) == []
    everything = postings.search(["network"], 10_000)
    assert len(everything) == postings.frequency("network")


@pytest.mark.parametrize("damage", ["truncate", "bad-meta", "other-format", "missing-file"])
def test_damaged_postings_are_refused_with_a_reason(fts_db: Path, tmp_path: Path, damage: str) -> None:
    folder = tmp_path / "bm25"
    build_postings(reading(fts_db), folder, stamp_of(fts_db))
    if damage == "truncate":
        data = (folder / "postings_impacts.bin").read_bytes()
        (folder / "postings_impacts.bin").write_bytes(data[: len(data) // 2])
    elif damage == "bad-meta":
        (folder / "meta.json").write_text("{not json")
    elif damage == "other-format":
        meta = json.loads((folder / "meta.json").read_text())
        (folder / "meta.json").write_text(json.dumps({**meta, "format": 99}))
    else:
        (folder / "terms.bin").unlink()
    with pytest.raises(PostingsError):
        Bm25Postings(folder)


def test_a_cancelled_build_leaves_the_previous_postings_untouched(fts_db: Path, tmp_path: Path) -> None:
    folder = tmp_path / "bm25"
    before = build_postings(reading(fts_db), folder, stamp_of(fts_db)).stamp
    token = CancelToken()

    def cancel_midway(progress: Progress) -> None:
        if progress.label == "reading BM25 postings":
            token.cancel()

    with pytest.raises(Cancelled):
        build_postings(reading(fts_db), folder, PostingsStamp(before.passages, before.last_rowid + 1),
                       progress=cancel_midway, cancel=token)
    assert Bm25Postings(folder).stamp == before
    assert not folder.with_name("bm25.building").exists()


# --- in a datastore ------------------------------------------------------------------------

@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    with Engine(home=tmp_path / "home") as opened:
        opened.embedder = HashingEmbedder()  # BM25 is what is tested here
        yield opened


def write_records(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_datastore_search_gives_the_same_ranking_from_postings_as_from_fts5(engine: Engine, tmp_path: Path) -> None:
    # Enough passages (> 1,000) for common-word pruning to apply on both paths.
    engine.add_datastore(write_records(tmp_path / "cs.jsonl", sample_records(700)), "cs", embed=False)
    [source] = engine.datastore_sources()
    assert (source.folder / POSTINGS_FOLDER / "meta.json").is_file()
    assert source.postings() is not None and source.postings().rows > 1000
    fast = {q: source.lexical(build_fts_query(q), 30) for q in QUESTIONS}
    source.forget_postings()
    assert source.postings() is None
    for question, ranked in fast.items():
        reference = source.lexical(build_fts_query(question), 30)
        assert [pid for pid, _ in ranked] == [pid for pid, _ in reference], question
        assert [s for _, s in ranked] == pytest.approx([s for _, s in reference], rel=1e-5)


def test_passages_added_later_are_found_once_postings_are_rebuilt(engine: Engine, tmp_path: Path) -> None:
    engine.add_datastore(write_records(tmp_path / "a.jsonl", sample_records(20)), "cs", embed=False)
    [source] = engine.datastore_sources()
    built = source.postings()
    assert built is not None
    late = {"id": "LATE", "title": "Xylophone acoustics", "text": "Xylophone bars vibrate in bending modes."}
    engine.add_datastore(write_records(tmp_path / "b.jsonl", [late]), "cs", embed=False)
    assert source.postings() is not None and source.postings().stamp.passages == built.stamp.passages + 1
    [(passage_id, _)] = source.lexical(build_fts_query("xylophone"), 5)
    assert passage_id == "cs:LATE#0"


def ranked_ids(ranked: list[tuple[str, float]]) -> list[str]:
    return [passage_id for passage_id, _ in ranked]


def test_stale_or_damaged_postings_fall_back_to_fts5_and_embed_rebuilds_them(engine: Engine, tmp_path: Path) -> None:
    engine.add_datastore(write_records(tmp_path / "a.jsonl", sample_records(20)), "cs", embed=False)
    folder = engine.datastore_sources()[0].folder / POSTINGS_FOLDER
    expected = ranked_ids(engine.datastore_sources()[0].lexical(build_fts_query("neural networks"), 10))
    (folder / "postings_docs.bin").write_bytes(b"\0" * 7)  # damaged on disk
    engine.close()
    with Engine(home=tmp_path / "home") as reopened:
        reopened.embedder = HashingEmbedder()
        [source] = reopened.datastore_sources()
        assert source.postings() is None
        assert ranked_ids(source.lexical(build_fts_query("neural networks"), 10)) == expected
        reopened.embed_datastore("cs")
        assert source.postings() is not None
        assert ranked_ids(source.lexical(build_fts_query("neural networks"), 10)) == expected
