"""CommonTerms: words most passages hold are left out of BM25 queries over large tables."""

from __future__ import annotations

import sqlite3

import pytest

from engine.retrieve.fts import CommonTerms, build_fts_query
from engine.store.vocabulary import TOKENIZER, FtsVocabulary, vocabulary_table_sql

ROWS = 2000


@pytest.fixture()
def conn() -> sqlite3.Connection:
    """2,000 passages: every other one says "models", one in a hundred says "graphene"."""
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    connection.execute(f"CREATE VIRTUAL TABLE passages_fts USING fts5(title, text, tokenize = '{TOKENIZER}')")
    rows = []
    for number in range(ROWS):
        words = [f"filler{number}"]
        if number % 2 == 0:
            words.append("models")
        if number % 100 == 0:
            words.append("graphene")
        rows.append(("", " ".join(words)))
    connection.executemany("INSERT INTO passages_fts(title, text) VALUES (?, ?)", rows)
    connection.execute(vocabulary_table_sql())
    return connection


def terms_of(conn: sqlite3.Connection, share: float = 0.3) -> CommonTerms:
    return CommonTerms(FtsVocabulary(lambda sql, params: conn.execute(sql, params).fetchall()), share=share)


def test_a_common_word_is_dropped_and_a_rare_one_kept(conn: sqlite3.Connection) -> None:
    pruned = terms_of(conn).prune(build_fts_query("graphene model"))
    # "model" is stemmed like the table's "models", so its frequency (half the rows) is found.
    assert pruned == '"graphene"'


def test_the_share_sets_what_counts_as_common(conn: sqlite3.Connection) -> None:
    query = build_fts_query("graphene models")
    assert terms_of(conn, share=0.6).prune(query) == query
    assert terms_of(conn, share=0.0).prune(query) == query  # 0 switches pruning off


def test_a_query_of_common_words_only_is_left_whole(conn: sqlite3.Connection) -> None:
    query = build_fts_query("models modelling")
    assert terms_of(conn).prune(query) == query


def test_small_tables_and_and_queries_are_left_alone(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM passages_fts WHERE rowid > 500")
    small = terms_of(conn)
    query = build_fts_query("graphene models")
    assert small.prune(query) == query
    assert terms_of(conn).prune(build_fts_query("graphene models", mode="and")) == '"graphene" AND "models"'


def test_pruned_query_still_finds_the_rare_passages(conn: sqlite3.Connection) -> None:
    pruned = terms_of(conn).prune(build_fts_query("graphene models"))
    found = conn.execute("SELECT count(*) FROM passages_fts WHERE passages_fts MATCH ?", (pruned,)).fetchone()[0]
    assert found == ROWS // 100


def test_quotes_inside_words_survive_the_round_trip(conn: sqlite3.Connection) -> None:
    query = '"graph""ene" OR "models"'  # a doubled quote is how FTS5 spells a quote inside a string
    pruned = terms_of(conn).prune(query)
    # Two tokens in one word: stems cannot be matched to words, so nothing is wrongly dropped.
    assert pruned == query
    conn.execute("SELECT count(*) FROM passages_fts WHERE passages_fts MATCH ?", (pruned,)).fetchone()


def test_every_passages_table_is_built_with_the_tokenizer_used_for_stemming() -> None:
    from engine.datastore import store as datastore_store
    from engine.store.schema import ensure_schema

    catalog = sqlite3.connect(":memory:", isolation_level=None)
    ensure_schema(catalog)
    (sql,) = catalog.execute("SELECT sql FROM sqlite_master WHERE name = 'passages_fts'").fetchone()
    assert f"tokenize = '{TOKENIZER}'" in sql
    assert f"tokenize = '{TOKENIZER}'" in datastore_store._SCHEMA
