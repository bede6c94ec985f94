"""Vector indexes: passage ids in and out, removal, atomic saves, damage and model changes.

Vectors come from the hashing embedder (deterministic, lexical) or a seeded generator; nothing
here needs a real model, only real FAISS and real files.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from engine.embed import HashingEmbedder
from engine.errors import EngineError, IndexCorruptError, StoreError
from engine.index import (
    FlatIndex,
    IVFIndex,
    VectorIndex,
    build_index,
    choose_kind,
    load_index,
    open_or_rebuild,
    passage_key,
    read_header,
    save_index,
    should_rebuild,
)

TEXTS = {
    "specter-0001": "SPECTER learns document embeddings of scientific papers from the citation graph",
    "cosmo-0003": "the apparent acceleration of the universe and average cosmic expansion",
    "parse-0002": "efficient parsing of syntactic and semantic dependency structures",
    "mapred-0010": "MapReduce simplified data processing on large clusters of machines",
    "topics-0004": "an architecture for parallel topic models with distributed sampling",
}


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(dimension=128)


@pytest.fixture
def index(embedder: HashingEmbedder) -> FlatIndex:
    built = FlatIndex(embedder.model_id, embedder.dimension)
    built.add(list(TEXTS), embedder.embed(list(TEXTS.values())))
    return built


def unit_vectors(count: int, dimension: int = 32, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, dimension)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


class Source:
    """A vectors_source that records whether a rebuild asked for the vectors."""

    def __init__(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        self.ids, self.vectors, self.calls = list(ids), vectors, 0

    def __call__(self) -> Iterator[tuple[list[str], np.ndarray]]:
        self.calls += 1
        for start in range(0, len(self.ids), 2):
            yield self.ids[start:start + 2], self.vectors[start:start + 2]


def test_search_returns_passage_ids_best_first(index: FlatIndex, embedder: HashingEmbedder) -> None:
    assert isinstance(index, VectorIndex)
    hits = index.search(embedder.embed(["document embeddings from the citation graph"])[0], k=3)
    assert hits[0][0] == "specter-0001"
    assert all(isinstance(passage_id, str) and passage_id in TEXTS for passage_id, _ in hits)
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True) and len(hits) == 3


def test_k_larger_than_the_index_and_empty_index(index: FlatIndex, embedder: HashingEmbedder) -> None:
    assert len(index.search(embedder.embed(["clusters"])[0], k=50)) == len(TEXTS)
    assert FlatIndex("m", 8).search(np.ones(8, dtype=np.float32), k=5) == []


def test_remove_and_replace(index: FlatIndex, embedder: HashingEmbedder) -> None:
    query = embedder.embed([TEXTS["specter-0001"]])[0]
    assert index.remove(["specter-0001", "never-indexed"]) == 1
    assert "specter-0001" not in index and len(index) == 4
    assert "specter-0001" not in [passage_id for passage_id, _ in index.search(query, k=10)]
    # Adding an id that is already there replaces its vector instead of duplicating it.
    index.add(["cosmo-0003"], embedder.embed([TEXTS["specter-0001"]]))
    assert len(index) == 4
    assert index.search(query, k=1)[0][0] == "cosmo-0003"


def test_query_from_another_model_is_a_clear_error_not_a_crash(index: FlatIndex) -> None:
    with pytest.raises(EngineError, match="rebuild the index"):
        index.search(np.ones(384, dtype=np.float32), k=3)


def test_keys_are_stable_non_negative_int64() -> None:
    assert passage_key("abc-0001") == passage_key("abc-0001") != passage_key("abc-0002")
    keys = [passage_key(f"doc-{n:04d}") for n in range(1000)]
    assert all(0 <= key < 2**63 for key in keys) and len(set(keys)) == 1000


def test_save_load_round_trip(index: FlatIndex, embedder: HashingEmbedder, tmp_path: Path) -> None:
    path = tmp_path / "library.qvi"
    header = save_index(index, path)
    assert (header.model_id, header.dimension, header.count, header.kind) == (embedder.model_id, 128, 5, "flat")
    assert read_header(path) == header
    loaded = load_index(path, model_id=embedder.model_id, dimension=128)
    query = embedder.embed(["topic models"])[0]
    assert loaded.search(query, k=5) == index.search(query, k=5)
    assert sorted(loaded.passage_ids()) == sorted(TEXTS)


def test_truncated_file_is_corrupt_and_gets_rebuilt(index: FlatIndex, embedder: HashingEmbedder,
                                                    tmp_path: Path) -> None:
    path = tmp_path / "library.qvi"
    save_index(index, path)
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.truncate(size - 100)
    with pytest.raises(IndexCorruptError, match="truncated"):
        load_index(path)

    source = Source(list(TEXTS), embedder.embed(list(TEXTS.values())))
    rebuilt = open_or_rebuild(path, embedder.model_id, embedder.dimension, source)
    assert source.calls == 1 and len(rebuilt) == 5
    assert load_index(path, embedder.model_id, embedder.dimension).search(source.vectors[2], 1)[0][0] == "parse-0002"
    open_or_rebuild(path, embedder.model_id, embedder.dimension, source)
    assert source.calls == 1  # sound now: loaded, not rebuilt again


def test_flipped_byte_fails_the_checksum(index: FlatIndex, tmp_path: Path) -> None:
    path = tmp_path / "library.qvi"
    save_index(index, path)
    data = bytearray(path.read_bytes())
    data[-300] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(IndexCorruptError, match="checksum"):
        load_index(path)


@pytest.mark.parametrize("garbage", [b"", b"not an index at all", b"QUIRE-VECTOR-INDEX\n\x05\x00\x00\x00{oops"])
def test_foreign_or_empty_files_are_corrupt(garbage: bytes, tmp_path: Path) -> None:
    path = tmp_path / "library.qvi"
    path.write_bytes(garbage)
    with pytest.raises(IndexCorruptError):
        load_index(path)


def test_model_change_rebuilds_instead_of_crashing(index: FlatIndex, tmp_path: Path) -> None:
    path = tmp_path / "library.qvi"
    save_index(index, path)
    new_model = HashingEmbedder(dimension=64)
    with pytest.raises(IndexCorruptError, match="built with the embedding model"):
        load_index(path, model_id=new_model.model_id, dimension=64)
    source = Source(list(TEXTS), new_model.embed(list(TEXTS.values())))
    rebuilt = open_or_rebuild(path, new_model.model_id, new_model.dimension, source)
    assert source.calls == 1
    assert (rebuilt.model_id, rebuilt.dimension) == (new_model.model_id, 64)
    assert read_header(path).model_id == new_model.model_id
    assert rebuilt.search(new_model.embed(["dependency parsing"])[0], k=1)[0][0] == "parse-0002"


def test_missing_file_is_built(embedder: HashingEmbedder, tmp_path: Path) -> None:
    source = Source(list(TEXTS), embedder.embed(list(TEXTS.values())))
    built = open_or_rebuild(tmp_path / "new" / "library.qvi", embedder.model_id, embedder.dimension, source)
    assert len(built) == 5 and (tmp_path / "new" / "library.qvi").exists()


def test_failed_save_leaves_the_old_file_intact(index: FlatIndex, embedder: HashingEmbedder, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "library.qvi"
    save_index(index, path)
    before = path.read_bytes()
    index.remove(["cosmo-0003"])

    def disk_full(_: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(StoreError, match="left as it was"):
        save_index(index, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["library.qvi"]  # no temporary file left behind
    assert len(load_index(path, embedder.model_id, embedder.dimension)) == 5


def test_size_decides_the_kind_and_ivf_behaves_like_flat(tmp_path: Path) -> None:
    assert choose_kind(1_000) == "flat" and choose_kind(5_000_000) == "ivf-sq8"
    vectors = unit_vectors(3000)
    ids = [f"doc{row // 10:04d}-{row % 10:04d}" for row in range(3000)]
    batches = [(ids[start:start + 500], vectors[start:start + 500]) for start in range(0, 3000, 500)]
    small = build_index("m", 32, iter(batches), flat_limit=5000)
    streamed = build_index("m", 32, iter(batches), flat_limit=1000)  # size unknown: IVF trained on 1,500
    large = build_index("m", 32, iter(batches), flat_limit=1000, expected_count=3000)
    assert isinstance(small, FlatIndex) and isinstance(large, IVFIndex) and len(large) == len(streamed) == 3000
    assert should_rebuild(small, flat_limit=1000) and not should_rebuild(large, flat_limit=1000)
    assert streamed.nlist < large.nlist
    large.nprobe = large.nlist  # every list scanned: only 8-bit quantisation separates it from exact search
    for row in (0, 1234, 2999):
        assert large.search(vectors[row], k=1)[0][0] == ids[row]
        approximate = {pid for pid, _ in large.search(vectors[row], 10)}
        assert len(approximate & {pid for pid, _ in small.search(vectors[row], 10)}) >= 8
    assert large.remove([ids[0]]) == 1 and ids[0] not in [pid for pid, _ in large.search(vectors[0], 5)]

    path = tmp_path / "large.qvi"
    save_index(large, path)
    loaded = load_index(path, "m", 32)
    assert isinstance(loaded, IVFIndex) and loaded.nprobe == large.nlist and len(loaded) == 2999
    assert read_header(path).params == {"nlist": large.nlist, "nprobe": large.nlist}


def test_ids_with_newlines_are_refused() -> None:
    with pytest.raises(ValueError, match="newline"):
        FlatIndex("m", 4).add(["bad\nid"], np.ones((1, 4), dtype=np.float32))
