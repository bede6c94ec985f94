"""The 1.5B writer as the second reader, for real (slow; needs ../shared/models/fetch-writer's model).

Loosely worded true sentences the six-layer judge misreads are read as supported; a sentence the
passage does not state, and one that says the opposite in words no check catches, are not.
"""

from __future__ import annotations

import pytest
from test_answer_judge_real import writer_path
from test_support_reader import MISREAD, S2ORC, VITD

from engine.generate.llama import LlamaModel
from engine.synthesis.support_reader import SupportReader

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reader() -> SupportReader:
    return SupportReader(LlamaModel(writer_path(), context_size=2048, threads=2))


def test_true_paraphrases_are_read_as_supported(reader: SupportReader) -> None:
    assert reader("S2ORC provides structured full text for millions of open access papers.", S2ORC) is not None
    assert reader(MISREAD, VITD) is not None


@pytest.mark.parametrize("claim", [
    "S2ORC was built by hand-labelling each paper's figures.",  # not stated
    "Vitamin D supplementation lowers Treg levels in COVID-19 patients.",  # the opposite, in other words
])
def test_what_the_passage_does_not_say_is_not(reader: SupportReader, claim: str) -> None:
    assert reader(claim, S2ORC if "S2ORC" in claim else VITD) is None
