"""A written sentence whose citation markers stood as its words says nothing once they are removed: it is
dropped, never shown as "This is described in and." nor counted as supported without a passage."""

from __future__ import annotations

from functools import cache

from fixtures.models import minilm

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.cite.verify import Verifier, VerifyReport, hollow, verify_text
from engine.embed import HashingEmbedder
from engine.types import Reference

SPECTER = ("We propose SPECTER, a new method to generate document-level embedding of scientific documents based on "
           "pretraining a Transformer language model on a powerful signal of document-level relatedness: the "
           "citation graph. Unlike existing pretrained language models, SPECTER can be easily applied to downstream "
           "applications without task-specific fine-tuning.")
S2ORC = ("We introduce S2ORC, a large corpus of 81.1M English-language academic papers spanning many academic "
         "disciplines.")
DRAFT = ("SPECTER can be applied to downstream applications without task-specific fine-tuning [1]. "
         "This is described in [1] and [2]. See [2]. It works [2].")


def sources() -> dict[int, Reference]:
    return {1: Reference(1, "p1", "d1", "library", Bibliography("SPECTER"), SPECTER, page=1),
            2: Reference(2, "p2", "d2", "library", Bibliography("S2ORC"), S2ORC, page=1)}


@cache
def judged() -> SupportScorer:
    return SupportScorer(minilm())


def test_markers_standing_as_words_leave_a_hollow_sentence() -> None:
    assert hollow("This is described in [1] and [2].") and hollow("See [2].") and hollow("As shown by [3], [4].")
    assert not hollow("SPECTER uses citations [1].") and not hollow("Yes [1].") and not hollow("It works [2].")
    assert not hollow("The main findings are [1]:") and not hollow("No markers in and.")


def test_hollow_sentences_are_dropped_and_a_cited_short_sentence_is_judged() -> None:
    for scorer in (judged(), SupportScorer(HashingEmbedder())):
        report = VerifyReport()
        sentences = verify_text(DRAFT, sources(), Verifier(scorer), report=report)
        texts = [s.text for s in sentences]
        assert not any("described in" in t or t.startswith("See") for t in texts), texts
        assert report.hollow == 2
        assert texts[0].startswith("SPECTER can be applied") and sentences[0].supported
        short = next(s for s in sentences if s.text.startswith("It works"))
        assert short.needs_citation, "a sentence the writer cited is a claim, not a connective"
        for sentence in sentences:
            assert not sentence.supported or sentence.citations, f"supported without a passage: {sentence}"
