"""The CrossEncoder reranker run for real: a tiny BERT cross-encoder is built and saved locally (random
weights, a word-level vocabulary; nothing is downloaded), then loaded from its folder the way a user's
saved model is, and its scores must decide the order."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.bibliography import Bibliography
from engine.errors import Cancelled
from engine.progress import CancelToken
from engine.rerank.choose import make_reranker
from engine.rerank.cross_encoder import CrossEncoderReranker
from engine.types import SearchHit

pytestmark = pytest.mark.slow

WORDS = ("protein corona nanoparticles lipid citation graph embeddings transformer retrieval parsing pdf "
         "scientific papers dense sparse index query passage model the of and a in on for with").split()
QUERY = "protein corona of lipid nanoparticles"
TEXTS = ["the protein corona on lipid nanoparticles", "citation graph embeddings for scientific papers",
         "dense retrieval with a transformer model", "parsing pdf papers", "a sparse index of passages"]


@pytest.fixture(scope="module")
def cross_encoder_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp("cross-encoder")
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(vocab))
    torch.manual_seed(7)
    config = transformers.BertConfig(vocab_size=len(WORDS) + 5, hidden_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=128,
                                     num_labels=1)
    model = transformers.BertForSequenceClassification(config).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _hits() -> list[SearchHit]:
    return [SearchHit(passage_id=f"p{i}", doc_id=f"d{i}", source="library", bib=Bibliography(""), text=text,
                      score=1.0 - i / 10, ranks=(("bm25", i + 1),)) for i, text in enumerate(TEXTS)]


def _logits(folder: Path, pairs: list[tuple[str, str]]) -> list[float]:
    """What the saved model itself says of each (query, passage) pair, computed without the reranker."""
    import torch
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(folder, local_files_only=True).eval()
    with torch.no_grad():
        batch = tokenizer([q for q, _ in pairs], [p for _, p in pairs], padding=True, truncation=True,
                          return_tensors="pt")
        return [float(v) for v in model(**batch).logits[:, 0]]


def test_the_cross_encoder_orders_passages_by_its_own_scores(cross_encoder_folder: Path) -> None:
    reranker = make_reranker(f"cross-encoder:{cross_encoder_folder}")
    assert isinstance(reranker, CrossEncoderReranker)
    reranked = reranker.rerank(QUERY, _hits())

    logits = _logits(cross_encoder_folder, [(QUERY, text) for text in TEXTS])
    expected = [f"p{i}" for i in sorted(range(len(TEXTS)), key=lambda i: -logits[i])]
    assert [hit.passage_id for hit in reranked] == expected
    assert [dict(hit.ranks)["rerank"] for hit in reranked] == [1, 2, 3, 4, 5]
    assert all(dict(hit.ranks)["bm25"] for hit in reranked)  # the earlier ranks are kept
    assert [hit.score for hit in reranked] == sorted((hit.score for hit in reranked), reverse=True)


def test_a_cancelled_rerank_stops(cross_encoder_folder: Path) -> None:
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises(Cancelled):
        CrossEncoderReranker(cross_encoder_folder).rerank(QUERY, _hits(), cancel)


def test_a_plain_cross_encoder_name_looks_in_the_models_folder(cross_encoder_folder: Path, tmp_path: Path) -> None:
    shutil.copytree(cross_encoder_folder, tmp_path / "cross-encoder")
    reranker = make_reranker("cross-encoder", models_dir=tmp_path)
    assert isinstance(reranker, CrossEncoderReranker) and reranker.folder == tmp_path / "cross-encoder"
    assert len(reranker.rerank(QUERY, _hits())) == len(TEXTS)
