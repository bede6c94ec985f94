"""Sanity check on PubMedQA: does each question find its own abstract in the top 10?

The 1,000 expert-labelled PubMedQA questions (``ori_pqal.json``) each come with the abstract they
were written from. The corpus is those 1,000 abstracts (their ``CONTEXTS`` joined, cut into
~250-word passages, no title); a question is answered when a passage of its own abstract is
among the top 10. Plain BM25 already reaches ~99 %, so this guards against a retrieval change
that helps the scholarly dev set by hurting plain lookups. It runs the product's Retriever
(fusion, feedback, per-paper cap, duplicate collapse) over the same BenchSource the quality
benchmark uses; vectors are cached like there.

    python benchmarks/pubmedqa.py [--configs bm25 hybrid ...] [--limit N] [--json OUT]
    python benchmarks/pubmedqa.py --configs bm25 dense hybrid --embedders bundled multilingual-e5-small
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from retrieval_common import DEFAULT_CACHE, SHARED, BenchSource, Record, bench_embedder, split_words
from retrieval_quality import configuration

from engine.embed import EmbeddingCache
from engine.process import prepare_process
from engine.retrieve.retriever import Retriever

PUBMEDQA = SHARED / "eval" / "pubmedqa" / "ori_pqal.json"


def load(limit: int | None) -> tuple[list[tuple[str, str]], list[Record]]:
    """(question, pubmed id) pairs and the abstracts' passages."""
    data = json.loads(PUBMEDQA.read_text(encoding="utf-8"))
    questions: list[tuple[str, str]] = []
    records: list[Record] = []
    for pmid, row in list(data.items())[:limit]:
        questions.append((row["QUESTION"], pmid))
        for ordinal, chunk in enumerate(split_words(" ".join(row["CONTEXTS"]))):
            records.append(Record(f"{pmid}#{ordinal}", pmid, "", chunk))
    return questions, records


def main() -> None:
    prepare_process()  # as the CLI does: offline hub client, passive OpenMP threads for llama.cpp
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="*", default=["bm25", "hybrid"])
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--embedders", nargs="*", default=["bundled"],
                        help='"bundled" (all-MiniLM-L6-v2 int8) and/or "multilingual-e5-small", each in this run')
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)

    questions, records = load(args.limit)
    print(f"{len(questions)} questions over {len(records)} abstract passages", flush=True)
    results = []
    for embedder_name in args.embedders:
        source = BenchSource("pubmedqa", records)
        embedder = None
        if any(not name.startswith("bm25") for name in args.configs):
            embedder = bench_embedder(None if embedder_name == "bundled" else embedder_name)
            started = time.perf_counter()
            with EmbeddingCache(args.cache / "embeddings.db") as cache:
                source.embed(embedder, cache)
            print(f"{embedder_name}: embedded (or read from the cache) in {time.perf_counter() - started:.0f} s")
        for name in args.configs:
            if name.startswith("bm25") and embedder_name != args.embedders[0]:
                continue  # the same with any embedder
            options, rewrite, _ = configuration(name)
            if rewrite:
                raise SystemExit("rewriting is not measured here (the sanity check is about plain lookups)")
            retriever = Retriever([source], embedder if options.dense else None, options=options)
            started = time.perf_counter()
            ranked = [[hit.doc_id for hit in retriever.search(question, k=10)] for question, _ in questions]
            result = {"config": name, "embedder": "" if name.startswith("bm25") else embedder_name,
                      "questions": len(questions),
                      "own_abstract_in_top10": round(sum(pmid in docs for docs, (_, pmid) in
                                                         zip(ranked, questions, strict=True)) / len(questions), 4),
                      "own_abstract_first": round(sum(docs[:1] == [pmid] for docs, (_, pmid) in
                                                      zip(ranked, questions, strict=True)) / len(questions), 4),
                      "seconds": round(time.perf_counter() - started, 1)}
            print(f"{name:<12} {result['embedder']:<22} own abstract first {result['own_abstract_first']:.3f}, "
                  f"in top 10 {result['own_abstract_in_top10']:.3f}", flush=True)
            results.append(result)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
