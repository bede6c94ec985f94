"""Full-text search on real PDFs: does the passage that answers a LitQA2 question rank in the top 3/5/10?

LitQA2's development half: 42 specific questions about findings in recent biology papers, each
with the verbatim key passage that answers it and the open-access PDF it comes from. The
library is those 42 PDFs plus the 24 corpus papers as distractors, ingested and embedded as
``quire ingest`` does. A hit counts when it comes from the question's paper and holds at least
60 % of the key passage's content words (words of 4+ letters) -- the contract check's rule.
Each configuration runs the product's Retriever over the library (the same code as ``quire
search``). Questions are split in two fixed halves (seeded shuffle): knobs are tuned on ``tune``
only; ``held-out`` shows what tuning is worth. LitQA2 is for measuring only: nothing is trained
on it.

    python benchmarks/fulltext_search.py [--configs default bm25 ...] [--home DIR] [--reingest] [--json OUT]

The library is built once in ``--home`` (default ~/.cache/quire-bench/fulltext); ``--reingest``
rebuilds it (after a change to extraction or chunking).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from retrieval_common import DEFAULT_CACHE, SHARED
from retrieval_quality import configuration

from engine.retrieve.retriever import Retriever
from engine.service import Engine

LITQA2 = SHARED / "eval" / "litqa2-dev"
CORPUS = SHARED / "corpus" / "papers"
CUTOFFS = (3, 5, 10)


def content_words(text: str) -> set[str]:
    """Lower-case words of 4+ letters or digits: what the hit rule compares."""
    return {w for w in re.findall(r"[a-z0-9]+", (text or "").lower()) if len(w) > 3}


def holds_key_passage(text: str, key_words: set[str]) -> bool:
    return len(key_words & content_words(text)) >= 0.6 * len(key_words)


def load_questions() -> list[dict[str, Any]]:
    with open(LITQA2 / "questions.jsonl", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def split_halves(questions: Sequence[dict[str, Any]], seed: int = 13) -> tuple[list[int], list[int]]:
    """Question positions in the tuning half and the held-out half (a fixed, seeded split)."""
    positions = list(range(len(questions)))
    random.Random(seed).shuffle(positions)
    half = len(positions) // 2
    return sorted(positions[:half]), sorted(positions[half:])


def build_library(home: Path, reingest: bool) -> Engine:
    """The 42 LitQA2 PDFs and the 24 corpus papers, ingested and embedded in ``home`` (once)."""
    done = home / ".ingested"
    if reingest and home.exists():
        shutil.rmtree(home)
    engine = Engine(home)
    if not done.exists():
        started = time.perf_counter()
        papers = sorted(LITQA2.glob("pdfs/*.pdf")) + sorted(CORPUS.glob("*.pdf"))
        list(engine.add_documents(papers))  # a generator: nothing is stored until it is read
        engine.embed_pending()
        done.write_text(f"{len(papers)} papers in {time.perf_counter() - started:.0f} s\n")
    return engine


def first_good_rank(retriever: Retriever, question: dict[str, Any], file_of: dict[str, str],
                    k: int = 10) -> int | None:
    """The 1-based rank of the first hit holding the key passage, or None."""
    key_words = content_words(question["key_passage"])
    for rank, hit in enumerate(retriever.search(question["question"], k=k), start=1):
        if file_of.get(hit.doc_id) == question["pdf"] and holds_key_passage(hit.text, key_words):
            return rank
    return None


def summarize(ranks: Sequence[int | None]) -> dict[str, float]:
    return {f"top{cut}": round(sum(r is not None and r <= cut for r in ranks) / len(ranks), 3) for cut in CUTOFFS}


def run_config(name: str, engine: Engine, questions: Sequence[dict[str, Any]], file_of: dict[str, str],
               halves: dict[str, list[int]]) -> dict[str, Any]:
    options, rewrite, _ = configuration(name)
    if rewrite:
        raise SystemExit("rewriting is not measured here")
    embedder = engine.embedder if options.dense else None
    retriever = Retriever([engine.library_source], embedder, options=options)
    started = time.perf_counter()
    ranks = [first_good_rank(retriever, q, file_of) for q in questions]
    result: dict[str, Any] = {"config": name}
    for half, positions in halves.items():
        result[half] = summarize([ranks[i] for i in positions])
    result["ranks"] = ranks
    result["seconds"] = round(time.perf_counter() - started, 1)
    cells = "  ".join(f"{half}: " + "/".join(f"{v:.2f}" for v in result[half].values()) for half in halves)
    print(f"{name:<40} top-3/5/10  {cells}", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="*", default=["bm25+spell", "dense", "hybrid+prf+dprf+spell+paper+cap3",
                                                            "hybrid+prf+dprf+spell+paper",
                                                            "hybrid+prf+dprf+spell+paper+local"])
    parser.add_argument("--home", type=Path, default=DEFAULT_CACHE / "fulltext")
    parser.add_argument("--reingest", action="store_true", help="ingest the PDFs again (extraction changed)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    questions = load_questions()
    engine = build_library(args.home, args.reingest)
    file_of = {doc.id: Path(str(doc.path)).name for doc in engine.documents()}
    missing = {q["pdf"] for q in questions} - set(file_of.values())
    if missing:
        raise SystemExit(f"{len(missing)} question PDFs are not in the library, e.g. {sorted(missing)[0]}")
    passages = sum(doc.passage_count for doc in engine.documents())
    print(f"{len(questions)} questions over {len(file_of)} papers ({passages} passages)", flush=True)
    tune, held_out = split_halves(questions)
    halves = {"tune": tune, "held-out": held_out, "all": list(range(len(questions)))}
    results = [run_config(name, engine, questions, file_of, halves) for name in args.configs]
    if args.json:
        args.json.write_text(json.dumps({"questions": len(questions), "papers": len(file_of), "passages": passages,
                                         "tune": tune, "results": results}, indent=2))
    engine.close()


if __name__ == "__main__":
    main()
