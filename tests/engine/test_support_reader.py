"""The second reader: a capable model gets a second look at sentences the judge leaves unsupported.

The judge here is the shipped one on real passages; what stands in for the writer is a model that
answers the support question with fixed probabilities, so each test says exactly what the reader
decided and checks what verification does with it (which passages it is asked about, in what order,
and which verdicts it may never overrule).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import pytest
from fixtures.models import minilm

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.cite.verify import READER_PASSAGES, Verifier, VerifyReport, verify_text
from engine.errors import GenerationError
from engine.protocols import ChatMessage
from engine.synthesis.support_reader import SUPPORTED, SupportReader, messages
from engine.types import Reference

VITD = ("Treg levels have been reported to be low in many COVID-19 patients and can be increased by vitamin D "
        "supplementation. Low vitamin D levels have been associated with an increase in inflammatory cytokines and a "
        "significantly increased risk of pneumonia and viral upper respiratory tract infections.")
S2ORC = ("We introduce S2ORC, a large corpus of 81.1M English-language academic papers spanning many academic "
         "disciplines. The corpus consists of rich metadata, paper abstracts, resolved bibliographic references, "
         "as well as structured full text for 8.1M open access papers.")
# True to a passage in other words, yet the six-layer judge's model finds it not stated, or even contradicted.
LOOSE = "S2ORC gives structured full text for millions of papers that are open access."
MISREAD = "Vitamin D deficiency is linked to more inflammation."


@cache
def scorer() -> SupportScorer:
    return SupportScorer(minilm())


def sources() -> dict[int, Reference]:
    return {1: Reference(1, "p1", "d1", "library", Bibliography("Vitamin D and COVID-19"), VITD, page=1),
            2: Reference(2, "p2", "d2", "library", Bibliography("S2ORC"), S2ORC, page=1)}


class Reader:
    """A reader whose answer per passage is fixed; it records what it was asked."""

    def __init__(self, scores: dict[str, float | None]) -> None:
        self.scores = scores
        self.asked: list[str] = []

    def __call__(self, claim: str, passage: str) -> float | None:
        self.asked.append(passage)
        return next((score for start, score in self.scores.items() if passage.startswith(start)), None)


def test_the_judge_alone_misreads_both_sentences() -> None:
    # What the reader is for; should the judge learn to read these, pick sentences it still misreads.
    assert verify_text(f"{LOOSE} [2]", sources(), Verifier(scorer()))[0].support == "unsupported"
    # Read as contradicted or as not stated: the judge has given both on different machines (its P(refutes)
    # sits near the cut-off); either way the judge alone does not support it, which is what the reader is for.
    assert verify_text(f"{MISREAD} [1]", sources(), Verifier(scorer()))[0].support in ("contradicted", "unsupported")


def test_a_sentence_the_reader_finds_supported_keeps_its_citation_with_a_verbatim_quote() -> None:
    reader, report = Reader({"We introduce": 0.93}), VerifyReport()
    [sentence] = verify_text(f"{LOOSE} [2]", sources(), Verifier(scorer(), reader=reader), report=report)
    assert sentence.support == "supported" and sentence.supported
    [citation] = sentence.citations
    assert citation.n == 2 and not citation.inserted and citation.support == 0.93
    assert citation.quote and citation.quote in S2ORC
    assert report.read == 1 and reader.asked[0] == S2ORC  # the cited passage is read first


def test_the_reader_may_overrule_the_judge_models_contradiction() -> None:
    reader = Reader({"Treg": 0.9})
    [sentence] = verify_text(f"{MISREAD} [1]", sources(), Verifier(scorer(), reader=reader))
    assert sentence.support == "supported" and [c.n for c in sentence.citations] == [1]
    assert not sentence.contradictions  # the passage it now cites is no longer listed against it


def test_an_uncited_passage_the_reader_finds_supporting_is_inserted() -> None:
    reader, report = Reader({"We introduce": 0.9}), VerifyReport()
    [sentence] = verify_text(f"{LOOSE} [1]", sources(), Verifier(scorer(), reader=reader), report=report)
    assert [c.n for c in sentence.citations] == [2] and sentence.citations[0].inserted
    assert reader.asked[-1] == S2ORC and report.inserted == 1


def test_a_reader_that_finds_nothing_leaves_the_sentence_unsupported() -> None:
    reader = Reader({})
    [sentence] = verify_text(f"{LOOSE} [2]", sources(), Verifier(scorer(), reader=reader))
    assert sentence.support == "unsupported" and not sentence.citations
    assert len(reader.asked) == READER_PASSAGES  # bounded: each read costs seconds on a CPU


def test_a_number_the_passage_does_not_share_is_never_read() -> None:
    reader = Reader({"We introduce": 0.99})
    [sentence] = verify_text("S2ORC holds 18.1M English-language academic papers [2].", sources(),
                             Verifier(scorer(), reader=reader))
    assert sentence.support != "supported" and S2ORC not in reader.asked


def test_a_sentence_a_check_contradicts_is_not_read_again() -> None:
    reader = Reader({"We introduce": 0.99})
    [sentence] = verify_text("S2ORC does not contain any full text for open access papers [2].", sources(),
                             Verifier(scorer(), reader=reader))
    assert sentence.support == "contradicted" and S2ORC not in reader.asked


def test_supported_sentences_cost_no_read() -> None:
    reader = Reader({"We introduce": 0.99})
    [sentence] = verify_text("S2ORC is a large corpus of 81.1M English-language academic papers [2].", sources(),
                             Verifier(scorer(), reader=reader))
    assert sentence.support == "supported" and not reader.asked


class Replies:
    """A model that answers every support question with the same reply probabilities."""

    def __init__(self, fully: float, partially: float, fail: bool = False) -> None:
        self.reply = [fully, partially, 1 - fully - partially]
        self.fail = fail
        self.calls = 0

    def reply_probabilities(self, messages: Sequence[ChatMessage], replies: Sequence[str]) -> list[float]:
        self.calls += 1
        assert tuple(replies) == ("Fully", "Partially", "No")
        if self.fail:
            raise GenerationError("the prompt is longer than the model's context")
        return self.reply


def test_the_reader_scores_fully_plus_half_partially_and_applies_its_threshold() -> None:
    assert SupportReader(Replies(0.8, 0.2))(LOOSE, VITD) == 0.9  # type: ignore[arg-type]
    assert SupportReader(Replies(0.05, 0.2))(LOOSE, VITD) is None  # 0.15 < the fitted threshold
    assert SupportReader(Replies(0.05, 0.2), threshold=0.1)(LOOSE, VITD) == pytest.approx(0.15)
    assert 0.15 < SUPPORTED < 0.9


def test_the_reader_asks_once_per_pair_and_a_model_error_adds_no_citation() -> None:
    model = Replies(0.95, 0.0)
    reader = SupportReader(model)
    reader(LOOSE, VITD), reader(LOOSE, VITD)
    assert model.calls == 1 and reader.reads == 1
    assert SupportReader(Replies(0.95, 0.0, fail=True))(LOOSE, VITD) is None


def test_the_prompt_holds_the_examples_the_passage_and_the_claim_with_markers_defused() -> None:
    system, user = messages("A claim [3].", "A passage citing [12] something. " + "x" * 5000)
    assert system.role == "system" and "Fully" in user.content and "Partially" in user.content
    assert "A claim" in user.content and "[12]" not in user.content
    assert len(user.content) < 4000  # a long passage is cut to fit the context


def test_checked_pairs_are_read_again_only_where_the_judges_model_alone_decided() -> None:
    from engine.cite.claims import judge_pairs
    from engine.cite.judge import READ_SUPPORTED, default_judge

    reader = Reader({"We introduce": 0.9})
    loose, changed = judge_pairs(default_judge(), [(LOOSE, S2ORC), ("S2ORC holds 18.1M papers.", S2ORC)], reader)
    assert loose.judgement.verdict == "supported" and loose.judgement.reason == READ_SUPPORTED
    assert loose.judgement.quote == S2ORC[loose.judgement.start:loose.judgement.end]
    assert changed.judgement.verdict != "supported" and len(reader.asked) == 1  # the number check stands


SPECTER = ("We propose SPECTER, a new method to generate document-level embedding of scientific documents based on "
           "pretraining a Transformer language model on a powerful signal of document-level relatedness: the "
           "citation graph.")


def test_a_passage_about_something_else_is_never_listed_against_a_sentence() -> None:
    """The judge's model reads "refutes" in a vitamin D passage against a sentence on S2ORC; a passage the
    sentence does not cite is listed against it only when it is about what the sentence says."""
    [sentence] = verify_text("S2ORC spans papers from many fields of research. [2]", sources(), Verifier(scorer()))
    assert all(c.n != 1 for c in sentence.contradictions), sentence.contradictions


def test_a_passage_on_the_same_subject_that_says_otherwise_is_still_listed() -> None:
    given = {**sources(), 3: Reference(3, "p3", "d3", "library", Bibliography("SPECTER"), SPECTER, page=1)}
    [sentence] = verify_text("SPECTER is not pretrained on the citation graph. [2]", given, Verifier(scorer()))
    assert sentence.support == "contradicted" and [c.n for c in sentence.contradictions] == [3]
