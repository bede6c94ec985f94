"""The 1.5B writer as the second reader, for real (slow; needs ../shared/models/fetch-writer's model).

Loosely worded true sentences the six-layer judge misreads are read as supported; a sentence the
passage does not state, and one that says the opposite in words no check catches, are not.
"""

from __future__ import annotations

import pytest
from fixtures.models import minilm
from test_answer_judge_real import writer_path
from test_support_reader import MISREAD, S2ORC, VITD

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.cite.verify import Verifier, verify_text
from engine.generate.llama import LlamaModel
from engine.synthesis.support_reader import SupportReader
from engine.types import Reference

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reader() -> SupportReader:
    return SupportReader(LlamaModel(writer_path(), context_size=2048, threads=2))


def test_true_paraphrases_are_read_as_supported(reader: SupportReader) -> None:
    assert reader("S2ORC provides structured full text for millions of open access papers.", S2ORC) is not None
    assert reader(MISREAD, VITD) is not None


@pytest.mark.parametrize("claim", [
    "S2ORC was built by hand-labelling each paper's figures.",  # not stated
    "Treg levels are high in most COVID-19 patients.",  # the opposite, in other words
])
def test_what_the_passage_does_not_say_is_not(reader: SupportReader, claim: str) -> None:
    assert reader(claim, S2ORC if "S2ORC" in claim else VITD) is None


def test_an_opposite_direction_never_reaches_the_reader(reader: SupportReader) -> None:
    # The writer cannot tell "lowers" from "raises" here (it scores both about 0.24); the direction
    # check can, and a sentence it contradicts is never handed to the reader.
    claim = "Vitamin D supplementation lowers Treg levels in COVID-19 patients."
    fresh = SupportReader(reader.lm)
    [sentence] = verify_text(f"{claim} [1]", {1: Reference(1, "p1", "d1", "library", Bibliography("Vitamin D"), VITD,
                                                           page=1)}, Verifier(SupportScorer(minilm()), reader=fresh))
    assert sentence.support == "contradicted" and fresh.reads == 0
