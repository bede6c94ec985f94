"""The measured constants of retrieval and answer writing, each with what it does and where it came from.

These are not user settings (those are :mod:`engine.config`, persisted as TOML): each value here was
chosen by a benchmark and changing one changes a reported figure. Before changing one, re-run the
benchmark named in its ``origin`` and report the figures beside the old ones (docs/numbers.md).
The modules that use a value keep a module-level name bound to the field, so a benchmark can still
set it for a grid search.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


def tuned(value: float, description: str, origin: str) -> Any:
    """A dataclass field holding a measured ``value``: what it does, and the measurement that chose it."""
    return field(default=value, metadata={"description": description, "origin": origin})


@dataclass(frozen=True)
class RetrievalTuning:
    """How search ranks passages (engine/retrieve)."""

    title_weight: float = tuned(
        1.0, "BM25 weight of a passage's paper title column (each FTS row holds its paper's title).",
        "benchmarks/retrieval_quality.py on the scholarly dev set: weighting the title above the text did not help.")
    text_weight: float = tuned(1.0, "BM25 weight of the passage text column.", "as title_weight")
    common_term_share: float = tuned(
        0.3, "A query word found in more than this share of a source's passages is left out of its BM25 query.",
        "benchmarks/retrieval_quality.py: BM25 nDCG@10 0.546 whole, 0.545 pruned at 30 %, 0.531 at 15 %, 0.493 at "
        "5 %; at 100k passages a query with such words cost ~120 ms against 45 ms without.")
    rrf_k: float = tuned(
        60.0, "k of reciprocal rank fusion, which merges the BM25 and dense lists.",
        "Cormack et al.'s k = 60 (TREC runs of 1,000 documents); benchmarks/retrieval_quality.py measures "
        "it on the scholarly dev set.")
    near_duplicate_jaccard: float = tuned(
        0.8, "Word-trigram Jaccard similarity above which two passages count as the same text.",
        "Set by hand: reprints and preprint/published pairs of one paper sit above it.")


@dataclass(frozen=True)
class SynthesisTuning:
    """How an answer's evidence is chosen and when a written answer gives way to the digest (engine/synthesis).

    Chosen on the odd-numbered LitQA2 dev questions and reported on the even ones (docs/answers.md).
    """

    relevance_threshold: float = tuned(
        0.25, "Absolute relevance floor: under it no passage addresses the question.",
        "benchmarks/answers.py fit, odd LitQA2 half.")
    relative_relevance: float = tuned(
        0.6, "A passage's paper must reach this share of the best paper's relevance.",
        "Odd LitQA2 half, 12 passages: 0.6 -> 7 % of sections from papers not addressing the question, 0.85 -> "
        "4.8 %, 0.9 -> 2.4 %, key passage cited in 90.5 % throughout; on 10 ScholarQA-Multi questions the share "
        "of expert-cited snippets cited is 0.892 with no floor, 0.817 with 0.6, 0.465 with 0.85.")
    table_relative_relevance: float = tuned(
        0.6, "relative_relevance for the per-paper table.", "0.6 kept the key passage as often on the odd half.")
    number_bonus: float = tuned(
        0.15, "Added to a sentence's score when the question asks 'how many' and the sentence states a quantity.",
        "benchmarks/answers.py fit grid (0, 0.1, 0.15, 0.2, 0.3), odd LitQA2 half.")
    name_bonus: float = tuned(
        0.05, "Added when the question asks 'which' and the sentence names something the question does not.",
        "benchmarks/answers.py fit, odd LitQA2 half.")
    counted_bonus: float = tuned(
        0.1, "Added on top of number_bonus when the sentence counts what the question counts ('how many genes').",
        "grid in docs/answers.md.")
    rank_penalty: float = tuned(
        0.0, "Subtracted per natural-log unit of search rank.",
        "benchmarks/answers.py fit grid: 0.02 and 0.05 measured worse than 0.")
    length_penalty: float = tuned(
        0.03, "Subtracted per 100 characters over 200: long sentences hold more question words without answering.",
        "Odd LitQA2 half: ideal answer in the first 400 characters 0.476 at 0, 0.571 at 0.03, 0.524 at 0.06.")
    topic_cosine_weight: float = tuned(
        0.4, "Weight of embedding cosine against shared content words in a sentence's topic score.",
        "The support scorer's fitted weight (tests/data/support_pairs.jsonl), reused.")
    second_quote_share: float = tuned(
        0.85, "A passage's next quote must score at least this share of its best one.", "Set by hand.")
    judge_weight: float = tuned(
        0.2, "Weight of the model's P(Yes) against the evidence score when the answer judge reranks sentences.",
        "Odd LitQA2 half (benchmarks/answer_judge.py): 0.1-0.3 gave the same result, 0.2 is its middle.")
    digest_margin: float = tuned(
        0.1, "A written answer whose first sentence is judged worse than the best quote by more than this is "
             "replaced by the digest (auto mode).",
        "Read off 21 written LitQA2 dev answers (docs/answers.md).")
    no_answer: float = tuned(
        0.45, "When every judged sentence scores under this, the library does not hold the answer.",
        "benchmarks/no_answer.py: LitQA2 dev odd questions with and without their paper, and 20 ScholarQA-Multi "
        "questions; about 0.1 under the lowest P(Yes) of a question whose answer is there.")


RETRIEVAL = RetrievalTuning()
SYNTHESIS = SynthesisTuning()


def described(tuning: RetrievalTuning | SynthesisTuning) -> list[tuple[str, float, str, str]]:
    """(name, value, description, origin) of each tuned field, for docs and for checks."""
    return [(f.name, getattr(tuning, f.name), f.metadata["description"], f.metadata["origin"])
            for f in fields(tuning)]
