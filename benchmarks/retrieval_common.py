"""Shared by the retrieval benchmarks: the dev-set corpus, a PassageSource over it, and the metrics.

Corpus (as the retrieval issue defines it): every snippet cited by a ScholarQA-Multi expert
answer (647 records, ids ``multi:<question>:<snippet>``) plus the sample datastore
``cs-sample.jsonl.gz`` cut into ~250-word passages as distractors (~9k passages). The source
ranks with the product's own pieces: the same FTS5 tokenizer and ``bm25_expression`` as the
library and datastores, the product's embedder through the embedding cache, a FlatIndex.
Vectors are cached in ``--cache`` (default ~/.cache/quire-bench) so reruns skip embedding.
"""

from __future__ import annotations

import gzip
import json
import math
import random
import re
import sqlite3
import sys
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.bibliography import Bibliography
from engine.embed import Embedder, EmbeddingCache, embed_passages
from engine.index import FlatIndex
from engine.progress import Progress
from engine.retrieve.fts import (
    TEXT_WEIGHT,
    TITLE_WEIGHT,
    CommonTerms,
    bm25_expression,
)
from engine.retrieve.source import ScoredId
from engine.store.vocabulary import FtsVocabulary, vocabulary_table_sql
from engine.text.keywords import keyword_text, title_keywords
from engine.text.language import detect_language
from engine.types import Passage, SearchHit, content_hash

SHARED = Path(__file__).resolve().parents[2] / "shared"
QUESTIONS = SHARED / "eval" / "scholarqa-multi" / "human_answers.json"
DATASTORE = SHARED / "datastore" / "cs-sample.jsonl.gz"
DEFAULT_CACHE = Path.home() / ".cache" / "quire-bench"
PASSAGE_WORDS = 250


@dataclass(frozen=True)
class Record:
    passage_id: str
    doc_id: str
    title: str
    text: str

    @property
    def search_text(self) -> str:
        return f"{self.title}\n{self.text}" if self.title else self.text


@dataclass(frozen=True)
class Question:
    index: int
    text: str
    relevant: frozenset[str]
    subject: str


def load_questions(path: Path = QUESTIONS) -> tuple[list[Question], list[Record]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    questions: list[Question] = []
    records: list[Record] = []
    for i, row in enumerate(data):
        relevant = []
        for j, ctx in enumerate(row["ctxs"]):
            record_id = f"multi:{i}:{j}"
            title = ctx.get("title") if isinstance(ctx.get("title"), str) else ""
            text = ctx.get("text") if isinstance(ctx.get("text"), str) else ""
            records.append(Record(record_id, record_id, title, text))
            relevant.append(record_id)
        questions.append(Question(i, row["input"], frozenset(relevant), row.get("subject", "")))
    return questions, records


def split_words(text: str, size: int = PASSAGE_WORDS) -> list[str]:
    words = text.split()
    return [" ".join(words[start:start + size]) for start in range(0, len(words), size)] or [""]


def load_distractors(path: Path = DATASTORE, limit: int | None = None) -> list[Record]:
    records: list[Record] = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if limit is not None and number >= limit:
                break
            row = json.loads(line)
            for ordinal, chunk in enumerate(split_words(row.get("text") or "")):
                records.append(Record(f"{row['id']}#{ordinal}", row["id"], row.get("title") or "", chunk))
    return records


def split_halves(questions: Sequence[Question], seed: int = 13) -> tuple[list[Question], list[Question]]:
    """A fixed split: tune on the first half, report the second too (no tuning on it)."""
    shuffled = list(questions)
    random.Random(seed).shuffle(shuffled)
    half = len(shuffled) // 2
    return sorted(shuffled[:half], key=lambda q: q.index), sorted(shuffled[half:], key=lambda q: q.index)


class BenchSource:
    """A PassageSource over an in-memory FTS5 table and a FlatIndex of the records."""

    def __init__(self, name: str, records: Sequence[Record], title_weight: float = TITLE_WEIGHT,
                 text_weight: float = TEXT_WEIGHT) -> None:
        self._name = name
        self.records = {r.passage_id: r for r in records}
        self.title_weight, self.text_weight = title_weight, text_weight
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE passages_fts USING fts5(title, text, pid UNINDEXED, doc UNINDEXED, "
                          "tokenize = 'porter unicode61 remove_diacritics 2')")
        # As the catalog writes it: each text's words as its language has them (engine/text/keywords.py).
        self.conn.executemany("INSERT INTO passages_fts(title, text, pid, doc) VALUES (?,?,?,?)",
                              [(title_keywords(r.title), keyword_text(r.text, detect_language(r.text)), r.passage_id,
                                r.doc_id) for r in records])
        self.index: FlatIndex | None = None
        self._vectors: dict[str, np.ndarray] = {}
        self.conn.execute(vocabulary_table_sql())
        self.vocabulary = FtsVocabulary(lambda sql, params: self.conn.execute(sql, params).fetchall())
        self.common_terms = CommonTerms(self.vocabulary)

    @property
    def name(self) -> str:
        return self._name

    def embed(self, embedder: Embedder, cache: EmbeddingCache, embedded_only: bool = False,
              first: Collection[str] = ()) -> None:
        """Embed every record (through the cache) and index the vectors.

        ``first`` (passage ids) are embedded before the rest, so an interrupted run has what matters
        most; ``embedded_only`` indexes what the cache already holds and embeds nothing (dense
        search then covers part of the corpus, as in the product's progressive indexing).
        """
        passages = [Passage(id=r.passage_id, doc_id=r.doc_id, ordinal=0, text=r.text, title=r.title, page_start=1,
                            page_end=1, char_start=0, char_end=0, rects=(), content_hash=content_hash(r.search_text))
                    for r in self.records.values()]
        self.index = FlatIndex(embedder.model_id, embedder.dimension)
        if embedded_only:
            found = cache.get_many(embedder.model_id, (p.content_hash for p in passages))
            kept = [p for p in passages if p.content_hash in found]
            if kept:
                self.index.add([p.id for p in kept], np.stack([found[p.content_hash] for p in kept]))
                self._vectors.update((p.id, found[p.content_hash]) for p in kept)
            print(f"  dense index over the {len(kept)} of {len(passages)} passages already embedded", file=sys.stderr)
            return

        def report(progress: Progress) -> None:
            if progress.total and progress.done % 512 < 32:
                print(f"  embedding {progress.done}/{progress.total}", file=sys.stderr, flush=True)

        wanted = set(first)
        phases = [[p for p in passages if p.id in wanted], [p for p in passages if p.id not in wanted]]
        for phase in phases:
            for start in range(0, len(phase), 512):
                chunk = phase[start:start + 512]
                result = embed_passages(embedder, cache, chunk, report)
                self.index.add([p.id for p in chunk], result.vectors)
                self._vectors.update(zip([p.id for p in chunk], result.vectors, strict=True))

    def lexical(self, fts_query: str, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        score = bm25_expression("passages_fts", self.title_weight, self.text_weight)
        rows = self.conn.execute(f"SELECT pid, -{score} FROM passages_fts WHERE passages_fts MATCH ? "
                                 f"ORDER BY {score}, rowid LIMIT ?", (self.common_terms.prune(fts_query), k)).fetchall()
        return [(pid, float(value)) for pid, value in rows]

    def dense(self, query_vector: np.ndarray, k: int, doc_ids: Collection[str] | None = None) -> list[ScoredId]:
        assert self.index is not None, "call embed() first"
        return self.index.search(query_vector, k)

    def vectors(self, passage_ids: Sequence[str]) -> dict[str, np.ndarray]:
        return {p: self._vectors[p] for p in passage_ids if p in self._vectors}

    def stem_frequencies(self, low: str, high: str) -> dict[str, int]:
        return self.vocabulary.stems_between(low, high)

    def hits(self, passage_ids: Sequence[str]) -> list[SearchHit]:
        return [SearchHit(passage_id=p, doc_id=self.records[p].doc_id, source=self._name,
                          bib=Bibliography(title=self.records[p].title), text=self.records[p].text)
                for p in passage_ids if p in self.records]

    def embed_pending(self, *args: object, **kwargs: object) -> int:
        return 0


# --- metrics ---------------------------------------------------------------------------------


def bench_embedder(name: str | Path | None = None, int8: bool = True) -> Embedder:
    """The embedder a benchmark measures: the bundled model (None), "multilingual-e5-small", or a folder."""
    from engine.embed import SentenceTransformerEmbedder
    from engine.embed.e5 import MULTILINGUAL_EMBEDDER, MultilingualE5Embedder

    if str(name) == MULTILINGUAL_EMBEDDER:
        return MultilingualE5Embedder()
    return SentenceTransformerEmbedder(name or None, quantize=int8)


def recall_at(ranked_docs: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Found relevant among the top k, over min(|relevant|, k) (the contract check's definition)."""
    if not relevant:
        return 0.0
    return len(set(ranked_docs[:k]) & set(relevant)) / min(len(relevant), k)


def ndcg_at(ranked_docs: Sequence[str], relevant: Collection[str], k: int = 10) -> float:
    """Binary-relevance nDCG@k; a relevant doc counts once (at its best rank)."""
    seen: set[str] = set()
    gain = 0.0
    for rank, doc in enumerate(ranked_docs[:k], start=1):
        if doc in relevant and doc not in seen:
            gain += 1.0 / math.log2(rank + 1)
            seen.add(doc)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return gain / ideal if ideal else 0.0


def summarize(runs: Iterable[tuple[Question, Sequence[str]]]) -> dict[str, float]:
    r5 = r10 = nd = 0.0
    n = 0
    for question, docs in runs:
        r5 += recall_at(docs, question.relevant, 5)
        r10 += recall_at(docs, question.relevant, 10)
        nd += ndcg_at(docs, question.relevant, 10)
        n += 1
    return {"recall@5": r5 / n, "recall@10": r10 / n, "ndcg@10": nd / n, "questions": n}


def subject_words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())
