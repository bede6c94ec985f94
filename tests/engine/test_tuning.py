"""Every measured constant is described, says where it was measured, and is the value the code uses."""

from __future__ import annotations

import pytest

from engine.retrieve import dedupe, fts, fusion
from engine.synthesis import answer_judge, evidence
from engine.tuning import RETRIEVAL, SYNTHESIS, described


@pytest.mark.parametrize("tuning", [RETRIEVAL, SYNTHESIS])
def test_each_tuned_value_has_a_description_and_an_origin(tuning: object) -> None:
    rows = described(tuning)  # type: ignore[arg-type]
    assert rows
    for name, value, description, origin in rows:
        assert isinstance(value, float), name
        assert len(description) > 20 and origin, name


def test_the_modules_use_the_tuned_values() -> None:
    assert (fts.TITLE_WEIGHT, fts.TEXT_WEIGHT, fts.COMMON_TERM_SHARE) == (1.0, 1.0, 0.3)
    assert fusion.DEFAULT_RRF_K == RETRIEVAL.rrf_k == 60.0
    assert dedupe.NEAR_DUPLICATE_JACCARD == 0.8
    assert (evidence.RELEVANCE_THRESHOLD, evidence.RELATIVE_RELEVANCE, evidence.NUMBER_BONUS, evidence.NAME_BONUS,
            evidence.COUNTED_BONUS, evidence.RANK_PENALTY, evidence.LENGTH_PENALTY, evidence.TOPIC_COSINE_WEIGHT,
            evidence.SECOND_QUOTE_SHARE) == (0.25, 0.6, 0.15, 0.05, 0.1, 0.0, 0.03, 0.4, 0.85)
    assert (answer_judge.WEIGHT, answer_judge.MARGIN, answer_judge.NO_ANSWER) == (0.2, 0.1, 0.45)
    assert SYNTHESIS.no_answer == answer_judge.NO_ANSWER
