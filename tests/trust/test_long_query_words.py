"""Long words are searchable: a 70-base DNA sequence, a SHA-512 hash, an 80-digit number.

Before, any query word over 64 characters was dropped, and a query of one such word was refused as
"holds no searchable words". CI spot checks: none of these is slow.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from engine.retrieve.fts import build_fts_query, query_terms
from tests.trust.test_datastore_faults import make_engine, write_jsonl

DNA = "ACGT" * 17 + "AC"  # 70 bases
HASH = hashlib.sha512(b"quire").hexdigest()  # 128 hex digits
NUMBER = "31415926535897932384626433832795028841971693993751058209749445923078164062862089"  # 80 digits
WORDS = {"dna-70": DNA, "sha512": HASH, "number-80": NUMBER}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("long")
    records = [{"id": name, "title": f"Record holding {name}", "text": f"The sequence {word} was observed in samples."}
               for name, word in WORDS.items()]
    records += [{"id": f"other-{i}", "title": f"Other {i}", "text": f"Unrelated samples number {i}."} for i in range(5)]
    with make_engine(folder / "home") as engine:
        engine.add_datastore(write_jsonl(folder / "records.jsonl", records), "sequences")
    return folder / "home"


@pytest.mark.parametrize("name", list(WORDS))
def test_a_long_word_is_a_query_term(name: str) -> None:
    word = WORDS[name]
    assert query_terms(word) == [word.lower()]
    assert build_fts_query(f"where is {word}") == f'"{word.lower()}"'


@pytest.mark.parametrize("name", list(WORDS))
def test_a_long_word_finds_the_passage_holding_it(home: Path, name: str) -> None:
    with make_engine(home) as engine:
        hits = engine.search(WORDS[name], k=3, rewrite=False, rerank="none")
        assert hits and hits[0].doc_id == name
        scoped = engine.search(WORDS[name], k=3, rewrite=False, rerank="none", doc_ids=[name, "other-1"])
        assert scoped and scoped[0].doc_id == name  # through FTS5 itself, not the precomputed postings
