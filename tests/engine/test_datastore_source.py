"""A datastore as a PassageSource: BM25 and dense search, hits with original ids, resumable embedding."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.datastore.registry import DatastoreNotFoundError, check_name
from engine.embed import HashingEmbedder
from engine.errors import Cancelled, EngineError
from engine.progress import CancelToken, Progress
from engine.retrieve.fts import build_fts_query
from engine.service import Engine

RECORDS = [
    {"id": "W1", "title": "Wide Residual Networks", "text": "Residual networks scale to thousands of layers. "
     "Wide residual networks decrease depth and increase width. They train faster.", "doi": "10.5244/C.30.87"},
    {"id": "S2", "title": "Semantic Segmentation in Street Scenes", "text": "Full-resolution residual networks "
     "segment street scenes. Semantic segmentation labels every pixel.", "url": "https://arxiv.org/abs/1611.08323"},
    {"id": "G3", "title": "Generative Adversarial Networks as Continual Learning", "text": "GAN training forgets. "
     "Continual learning methods reduce forgetting in the discriminator."},
]


class CountingEmbedder(HashingEmbedder):
    """The hashing double, counting how many texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts = 0

    def embed(self, texts: Sequence[str], *args: Any, **kwargs: Any) -> np.ndarray:
        self.texts += len(texts)
        return super().embed(texts, *args, **kwargs)


def write_records(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    with Engine(home=tmp_path / "home") as opened:
        opened.embedder = HashingEmbedder()  # the model is beside the point here
        yield opened


def test_bm25_hits_carry_the_original_id_and_the_datastore_name(engine: Engine, tmp_path: Path) -> None:
    engine.add_datastore(write_records(tmp_path / "d.jsonl", RECORDS), "papers", embed=False)
    [source] = engine.datastore_sources()
    assert source.name == "papers"
    ranked = source.lexical(build_fts_query("residual"), 5)
    assert ranked and all(pid.startswith("papers:") for pid, _ in ranked)
    assert ranked == sorted(ranked, key=lambda hit: -hit[1])
    hits = source.hits([pid for pid, _ in ranked])
    assert hits[0].doc_id in {"W1", "S2"} and {h.doc_id for h in hits} <= {"W1", "S2"}
    assert all(h.source == "papers" and h.page is None for h in hits)
    wide = next(h for h in hits if h.doc_id == "W1")
    assert wide.bib.title == "Wide Residual Networks" and wide.bib.doi == "10.5244/c.30.87"
    street = next(h for h in hits if h.doc_id == "S2")
    assert street.bib.arxiv_id == "1611.08323"
    # Restricting to documents uses the original ids; unknown and foreign ids are skipped.
    assert {pid for pid, _ in source.lexical(build_fts_query("residual"), 5, doc_ids=["S2"])} == {
        hit.passage_id for hit in hits if hit.doc_id == "S2"}
    assert source.hits(["papers:nope#0", "library-id-0001", hits[0].passage_id])[0] == hits[0]


def test_a_datastore_without_vectors_searches_by_bm25_and_dense_returns_nothing(engine: Engine,
                                                                                 tmp_path: Path) -> None:
    engine.add_datastore(write_records(tmp_path / "d.jsonl", RECORDS), "bm25only", embed=False)
    [source] = engine.datastore_sources()
    vector = HashingEmbedder().embed(["residual networks"])[0]
    assert source.dense(vector, 5) == []
    assert source.pending_count() == 3
    assert engine.datastores()[0].embedded == 0


def test_stored_vectors_are_the_embedded_passages_and_none_before_embedding(engine: Engine, tmp_path: Path) -> None:
    engine.add_datastore(write_records(tmp_path / "d.jsonl", RECORDS), "papers", embed=False)
    source = engine.datastore_registry.source("papers")
    ids = [pid for pid, _ in source.lexical(build_fts_query("residual networks"), 5)]
    assert ids and source.vectors(ids) == {}  # nothing embedded yet: dense feedback has nothing to move
    engine.embed_datastore("papers")
    stored = source.vectors([*ids, "papers:nope#0", "library-id-0001"])
    assert sorted(stored) == sorted(ids)
    for hit in source.hits(ids):
        assert np.allclose(stored[hit.passage_id], HashingEmbedder().embed([hit.search_text])[0], atol=1e-6)


def test_embedding_is_cancellable_and_resumes_without_recomputing(engine: Engine, tmp_path: Path) -> None:
    records = [{"id": f"r{i}", "title": f"Paper {i}", "text": f"Topic {i % 5} is studied in paper {i}."}
               for i in range(700)]
    engine.add_datastore(write_records(tmp_path / "many.jsonl", records), "many", embed=False)
    counting = CountingEmbedder()
    engine.embedder = counting
    source = engine.datastore_registry.source("many")
    cancel = CancelToken()

    def stop_after_first_step(progress: Progress) -> None:
        if progress.stage == "embed" and progress.done >= 256:
            cancel.cancel()

    with pytest.raises(Cancelled):
        source.embed_pending(stop_after_first_step, cancel)
    assert 0 < len(source.index()) < 700
    assert source.index_path.exists()  # what was done is saved
    done_before = len(source.index())
    added = engine.embed_datastore("many")
    assert added == 700 - done_before
    assert source.pending_count() == 0
    assert counting.texts == 700, "vectors computed before the cancel were reused from the cache"
    vector = engine.embedder.embed(["Paper 42\nTopic 2 is studied in paper 42."])[0]
    top = source.dense(vector, 3)
    assert source.hits([top[0][0]])[0].doc_id == "r42"
    assert source.dense(vector, 3, doc_ids=["r7"])[0][0] == "many:r7#0"


def test_a_truncated_index_is_rebuilt_from_the_cache(engine: Engine, tmp_path: Path) -> None:
    engine.add_datastore(write_records(tmp_path / "d.jsonl", RECORDS), "papers")
    source = engine.datastore_registry.source("papers")
    assert len(source.index()) == 3
    index_path = source.index_path
    engine.datastore_registry.forget("papers")
    index_path.write_bytes(index_path.read_bytes()[:100])
    reopened = engine.datastore_registry.source("papers")
    assert len(reopened.index()) == 3
    vector = engine.embedder.embed(["Wide Residual Networks\nResidual networks scale"])[0]
    assert reopened.dense(np.asarray(vector), 1)[0][0].startswith("papers:W1#")


def test_list_remove_and_names(engine: Engine, tmp_path: Path) -> None:
    engine.add_datastore(write_records(tmp_path / "d.jsonl", RECORDS), "one", embed=False)
    engine.add_datastore(write_records(tmp_path / "d.jsonl", RECORDS), "two", embed=False)
    infos = {info.name: info for info in engine.datastores()}
    assert set(infos) == {"one", "two"} and infos["one"].records == 3 and infos["one"].passages == 3
    engine.remove_datastore("one")
    assert [info.name for info in engine.datastores()] == ["two"]
    assert not (engine.paths.datastores / "one").exists()
    with pytest.raises(DatastoreNotFoundError):
        engine.remove_datastore("one")
    for bad in ("../up", "a/b", "", "library", ".hidden"):
        with pytest.raises(EngineError):
            check_name(bad)


def test_a_file_with_no_usable_records_leaves_no_datastore(engine: Engine, tmp_path: Path) -> None:
    page = tmp_path / "page.jsonl"
    page.write_text("<!DOCTYPE html>\n<html><body>Not found</body></html>\n")
    with pytest.raises(EngineError, match="no usable records"):
        engine.add_datastore(page, "web")
    assert engine.datastores() == []
