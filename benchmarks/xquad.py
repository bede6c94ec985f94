"""Search in five languages on XQuAD: does a question find its paragraph, in its own language and in English?

XQuAD (../shared/eval/xquad/, CC BY-SA 4.0) holds the same 240 paragraphs and 1,190 questions in
English, German, Spanish, Chinese and Arabic. Each language's paragraphs become one datastore (a
BenchSource: an FTS5 table written as the catalog writes it, and a flat vector index). For a sample
of questions (the same question ids in every language) it reports, per language:

- own: the question's paragraph in the top 5 of its own language's datastore;
- to English: the question (in its language) finding the English paragraph in the top 5;

for these searches, in one run: ``bm25-before`` (FTS5 as it was: the raw text, words split at spaces,
Porter for every language), ``bm25`` (the keyword search of engine/text/keywords.py: the language's
stemmer, Chinese cut into words by ICU), ``default`` (the product's Retriever with its default
options and the bundled embedder, which is English-only), and with ``--e5`` the multilingual
embedder (engine/embed/e5.py) alone (``e5-dense``) and fused with the keyword search as the
product fuses them (``e5-hybrid``). Nothing here is tuned on XQuAD.

    python benchmarks/xquad.py [--questions 200] [--e5] [--json benchmarks/results/xquad.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from retrieval_common import DEFAULT_CACHE, BenchSource, Record

from engine.embed import EmbeddingCache, SentenceTransformerEmbedder
from engine.embed.e5 import MultilingualE5Embedder
from engine.retrieve.fts import any_of, build_fts_query
from engine.retrieve.retriever import RetrievalOptions, Retriever
from engine.store.vocabulary import TOKENIZER
from engine.text.keywords import segmenter_name
from engine.text.stopwords import STOP_WORDS
from engine.text.tokens import WORD

XQUAD = Path(__file__).resolve().parents[2] / "shared" / "eval" / "xquad"
LANGUAGES = ("en", "de", "es", "zh", "ar")
TOP = 5


def load(language: str) -> tuple[list[Record], dict[str, tuple[str, str]]]:
    """The language's paragraphs as records, and each question id's (question, paragraph id)."""
    data = json.loads((XQUAD / f"xquad.{language}.json").read_text(encoding="utf-8"))
    records: list[Record] = []
    questions: dict[str, tuple[str, str]] = {}
    for article in data["data"]:
        for number, paragraph in enumerate(article["paragraphs"]):
            paragraph_id = f"{article['title']}#{number}"  # the same in every language's file
            records.append(Record(paragraph_id, paragraph_id, "", paragraph["context"]))
            for qa in paragraph["qas"]:
                questions[qa["id"]] = (qa["question"], paragraph_id)
    return records, questions


class RawFts:
    """BM25 as it was before: the raw text in FTS5 (Porter, words at spaces), the question's words OR'd."""

    def __init__(self, records: Sequence[Record]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, pid UNINDEXED, tokenize = '{TOKENIZER}')")
        self.conn.executemany("INSERT INTO t(text, pid) VALUES (?, ?)", [(r.text, r.passage_id) for r in records])

    def search(self, question: str, k: int) -> list[str]:
        words = list(dict.fromkeys(w.lower() for w in WORD.findall(question)))
        words = [w for w in words if w not in STOP_WORDS] or words
        rows = self.conn.execute("SELECT pid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (any_of(words), k))
        return [pid for (pid,) in rows]


def lexical(source: BenchSource) -> Callable[[str, int], list[str]]:
    def search(question: str, k: int) -> list[str]:
        return [pid for pid, _ in source.lexical(build_fts_query(question), k)]
    return search


def retrieval(sources: dict[str, BenchSource], embedder: Any,
              options: RetrievalOptions) -> Callable[[str], Callable[[str, int], list[str]]]:
    """For a language, the product's Retriever over that language's paragraphs: question, k -> ids."""
    def make(language: str) -> Callable[[str, int], list[str]]:
        retriever = Retriever([sources[language]], embedder, None, None, options)
        return lambda question, k: [hit.doc_id for hit in retriever.search(question, k=k)]
    return make


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=200, help="questions sampled (the same ids in every language)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-dense", action="store_true", help="skip the default (hybrid) search")
    parser.add_argument("--e5", action="store_true", help="also search with the multilingual embedder")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)

    loaded = {language: load(language) for language in LANGUAGES}
    ids = sorted(set.intersection(*(set(questions) for _, questions in loaded.values())))
    sample = random.Random(args.seed).sample(ids, min(args.questions, len(ids)))
    started = time.perf_counter()
    sources = {language: BenchSource(language, records) for language, (records, _) in loaded.items()}
    index_seconds = time.perf_counter() - started
    raw = {language: RawFts(records) for language, (records, _) in loaded.items()}
    embedder: Any = None
    if not args.no_dense:
        embedder = SentenceTransformerEmbedder(None, quantize=True)
        with EmbeddingCache(args.cache / "embeddings.db") as cache:
            for source in sources.values():
                source.embed(embedder, cache)
    searches: dict[str, Callable[[str], Callable[[str, int], list[str]]]] = {
        "bm25-before": lambda language: raw[language].search,
        "bm25": lambda language: lexical(sources[language]),
    }
    if embedder is not None:
        searches["default"] = retrieval(sources, embedder, RetrievalOptions())
    if args.e5:
        e5 = MultilingualE5Embedder()
        e5_sources = {language: BenchSource(language, records) for language, (records, _) in loaded.items()}
        started = time.perf_counter()
        with EmbeddingCache(args.cache / "embeddings.db") as cache:
            for source in e5_sources.values():
                source.embed(e5, cache)
        print(f"e5: {len(e5_sources)} languages embedded in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        searches["e5-dense"] = retrieval(e5_sources, e5, RetrievalOptions(lexical=False))
        searches["e5-hybrid"] = retrieval(e5_sources, e5, RetrievalOptions())
    results: dict[str, Any] = {"questions": len(sample), "seed": args.seed, "segmenter": segmenter_name(),
                               "keyword_index_seconds_1200_paragraphs": round(index_seconds, 1), "by_search": {}}
    for name, make in searches.items():
        row: dict[str, Any] = {}
        timings: list[float] = []
        for language in LANGUAGES:
            questions = loaded[language][1]
            own, to_english = make(language), make("en")
            hits_own = hits_en = 0
            for qid in sample:
                question, paragraph = questions[qid]
                t0 = time.perf_counter()
                hits_own += paragraph in own(question, TOP)
                timings.append(time.perf_counter() - t0)
                hits_en += paragraph in to_english(question, TOP)
            row[language] = {"own_top5": round(hits_own / len(sample), 3),
                             "to_english_top5": round(hits_en / len(sample), 3)}
        timings.sort()
        row["query_p50_ms"] = round(1000 * timings[len(timings) // 2], 2)
        results["by_search"][name] = row
        cells = "  ".join(f"{lang} {row[lang]['own_top5']:.3f}/{row[lang]['to_english_top5']:.3f}"
                          for lang in LANGUAGES)
        print(f"{name:<12} own/to-English top 5: {cells}  p50 {row['query_p50_ms']} ms", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
