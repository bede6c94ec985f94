"""Every measured constant is described, says where it was measured, and is the value the code uses."""

from __future__ import annotations

from types import ModuleType

import pytest

from engine.cite import checks, judge, support, verify
from engine.retrieve import dedupe, fts, fusion
from engine.retrieve.retriever import RetrievalOptions
from engine.synthesis import answer_judge, evidence, paper_table, support_reader
from engine.tuning import CITATION, RETRIEVAL, SYNTHESIS, described

# (module, its module-level name, tuning group, field): every tuned field is read through one of these.
BINDINGS: list[tuple[ModuleType, str, object, str]] = [
    (fts, "TITLE_WEIGHT", RETRIEVAL, "title_weight"),
    (fts, "TEXT_WEIGHT", RETRIEVAL, "text_weight"),
    (fts, "COMMON_TERM_SHARE", RETRIEVAL, "common_term_share"),
    (fusion, "DEFAULT_RRF_K", RETRIEVAL, "rrf_k"),
    (dedupe, "NEAR_DUPLICATE_JACCARD", RETRIEVAL, "near_duplicate_jaccard"),
    (evidence, "RELEVANCE_THRESHOLD", SYNTHESIS, "relevance_threshold"),
    (evidence, "RELATIVE_RELEVANCE", SYNTHESIS, "relative_relevance"),
    (evidence, "TABLE_RELATIVE_RELEVANCE", SYNTHESIS, "table_relative_relevance"),
    (evidence, "NUMBER_BONUS", SYNTHESIS, "number_bonus"),
    (evidence, "NAME_BONUS", SYNTHESIS, "name_bonus"),
    (evidence, "COUNTED_BONUS", SYNTHESIS, "counted_bonus"),
    (evidence, "RANK_PENALTY", SYNTHESIS, "rank_penalty"),
    (evidence, "LENGTH_PENALTY", SYNTHESIS, "length_penalty"),
    (evidence, "TOPIC_COSINE_WEIGHT", SYNTHESIS, "topic_cosine_weight"),
    (evidence, "SECOND_QUOTE_SHARE", SYNTHESIS, "second_quote_share"),
    (evidence, "PER_PAPER", SYNTHESIS, "per_paper"),
    (answer_judge, "WEIGHT", SYNTHESIS, "judge_weight"),
    (answer_judge, "MARGIN", SYNTHESIS, "digest_margin"),
    (answer_judge, "NO_ANSWER", SYNTHESIS, "no_answer"),
    (answer_judge, "CANDIDATES", SYNTHESIS, "judge_candidates"),
    (paper_table, "CELL_FLOOR", SYNTHESIS, "cell_floor"),
    (paper_table, "CELL_READ_LIMIT", SYNTHESIS, "cell_read_limit"),
    (evidence, "ANSWER_READ_LIMIT", SYNTHESIS, "answer_read_limit"),
    (support, "EMBEDDING_WEIGHT", CITATION, "embedding_weight"),
    (support, "SUPPORT_THRESHOLD", CITATION, "support_threshold"),
    (support, "INSERT_THRESHOLD", CITATION, "insert_threshold"),
    (checks, "ADDED_CLAUSE_COVERAGE", CITATION, "added_clause_coverage"),
    (judge, "WINDOWS_PER_PASSAGE", CITATION, "judge_windows"),
    (judge, "MIN_WINDOW_WORDS", CITATION, "min_window_words"),
    (judge, "SAME_TOPIC", CITATION, "contradiction_topic_share"),
    (judge, "VETO", CITATION, "veto"),
    (support_reader, "SUPPORTED", CITATION, "reader_supported"),
    (verify, "READER_PASSAGES", CITATION, "reader_passages"),
]

# The values as they were measured: moving a constant into engine/tuning.py must not change it.
MEASURED = {
    "TITLE_WEIGHT": 1.0, "TEXT_WEIGHT": 1.0, "COMMON_TERM_SHARE": 0.3, "DEFAULT_RRF_K": 60.0,
    "NEAR_DUPLICATE_JACCARD": 0.8, "RELEVANCE_THRESHOLD": 0.25, "RELATIVE_RELEVANCE": 0.6,
    "TABLE_RELATIVE_RELEVANCE": 0.6, "NUMBER_BONUS": 0.15, "NAME_BONUS": 0.05, "COUNTED_BONUS": 0.1,
    "RANK_PENALTY": 0.0, "LENGTH_PENALTY": 0.03, "TOPIC_COSINE_WEIGHT": 0.4, "SECOND_QUOTE_SHARE": 0.85,
    "PER_PAPER": 0, "WEIGHT": 0.2, "MARGIN": 0.1, "NO_ANSWER": 0.45, "CANDIDATES": 8, "CELL_FLOOR": 0.12,
    "CELL_READ_LIMIT": 8, "ANSWER_READ_LIMIT": 32,
    "EMBEDDING_WEIGHT": 0.4, "SUPPORT_THRESHOLD": 0.67, "INSERT_THRESHOLD": 0.75, "ADDED_CLAUSE_COVERAGE": 0.5,
    "WINDOWS_PER_PASSAGE": 3, "MIN_WINDOW_WORDS": 3, "SAME_TOPIC": 0.5, "VETO": 0.5, "SUPPORTED": 0.25,
    "READER_PASSAGES": 2,
}


@pytest.mark.parametrize("tuning", [RETRIEVAL, SYNTHESIS, CITATION])
def test_each_tuned_value_has_a_description_and_an_origin(tuning: object) -> None:
    rows = described(tuning)  # type: ignore[arg-type]
    assert rows
    for name, value, description, origin in rows:
        assert isinstance(value, int | float | str) and not isinstance(value, bool), name
        assert len(description) > 20 and origin, name


@pytest.mark.parametrize(("module", "name", "tuning", "field"), BINDINGS,
                         ids=[f"{m.__name__}.{n}" for m, n, _, _ in BINDINGS])
def test_the_module_name_is_bound_to_its_tuned_field(module: ModuleType, name: str, tuning: object,
                                                     field: str) -> None:
    assert getattr(module, name) == getattr(tuning, field)
    assert getattr(module, name) == MEASURED[name]


# Search's measured knobs are the defaults of RetrievalOptions: (option, how to read it there, tuned field, measured).
RETRIEVAL_OPTIONS: list[tuple[str, str, object]] = [
    ("candidates", "candidates", 100), ("rrf_k", "rrf_k", 60.0), ("rerank_depth", "rerank_depth", 30),
    ("fusion", "fusion", "zscore"), ("bm25", "bm25_weight", 1.0), ("dense", "dense_weight", 0.7),
    ("rewrite", "rewrite_weight", 0.5), ("feedback", "feedback_weight", 0.5),
    ("dense_feedback", "dense_feedback_list_weight", 1.0), ("feedback_passages", "feedback_passages", 5),
    ("feedback_terms", "feedback_terms", 10), ("dense_feedback_passages", "dense_feedback_passages", 3),
    ("dense_feedback_weight", "dense_feedback_weight", 2.0), ("paper_evidence", "paper_evidence", 0.2),
    ("within_paper", "within_paper", 0.5),
]


def test_search_options_take_their_defaults_from_tuning() -> None:
    options = RetrievalOptions()
    for option, field, measured in RETRIEVAL_OPTIONS:
        used = options.weights[option] if option in options.weights else getattr(options, option)
        assert used == getattr(RETRIEVAL, field) == measured, option


def test_every_tuned_field_is_used_through_a_module_name() -> None:
    bound = {(id(tuning), field) for _, _, tuning, field in BINDINGS}
    bound |= {(id(RETRIEVAL), field) for _, field, _ in RETRIEVAL_OPTIONS}
    for tuning in (RETRIEVAL, SYNTHESIS, CITATION):
        for name, *_ in described(tuning):
            assert (id(tuning), name) in bound, name


def test_the_support_scorer_and_reader_default_to_the_tuned_values() -> None:
    """Defaults bound when the classes were defined: they must be the tuned values too."""
    scorer = support.SupportScorer(embedder=None, judge=None)  # type: ignore[arg-type]
    assert (scorer.weight, scorer.threshold, scorer.insert_threshold) == (
        CITATION.embedding_weight, CITATION.support_threshold, CITATION.insert_threshold)
    assert support_reader.SupportReader(lm=None).threshold == CITATION.reader_supported  # type: ignore[arg-type]
