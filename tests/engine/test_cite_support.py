"""The support scorer and verification: fitted thresholds on the labelled corpus pairs, drop / insert / flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.models import minilm

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.cite.verify import Verifier, VerifyReport, verify_sentence, verify_text
from engine.cite.windows import content_words, quote_windows
from engine.embed import HashingEmbedder
from engine.types import PageRect, Rect, Reference

PAIRS = [json.loads(line) for line in
         (Path(__file__).parents[1] / "data" / "support_pairs.jsonl").read_text(encoding="utf-8").splitlines()]

SPECTER = ("We propose SPECTER, a new method to generate document-level embedding of scientific documents based on "
           "pretraining a Transformer language model on a powerful signal of document-level relatedness: the "
           "citation graph. Unlike existing pretrained language models, SPECTER can be easily applied to downstream "
           "applications without task-specific fine-tuning. We also introduce SCIDOCS, a new evaluation benchmark.")
S2ORC = ("We introduce S2ORC, a large corpus of 81.1M English-language academic papers spanning many academic "
         "disciplines. The corpus consists of rich metadata, paper abstracts, resolved bibliographic references, "
         "as well as structured full text for 8.1M open access papers.")


def sources() -> dict[int, Reference]:
    return {1: Reference(1, "p1", "d1", "library", Bibliography("SPECTER"), SPECTER, page=1),
            2: Reference(2, "p2", "d2", "library", Bibliography("S2ORC"), S2ORC, page=1)}


def boxes(passage_id: str, start: int, end: int) -> tuple[PageRect, ...]:
    return (PageRect(1, Rect(float(start), 0.0, float(end), 10.0)),)


def test_content_words_ignore_stopwords_and_markers_but_keep_numbers() -> None:
    assert content_words("The corpus has 81.1 million papers [3].") == {"corpu", "81.1", "million"}
    assert "the" not in content_words("the embeddings")


def test_windows_are_verbatim_spans_and_skip_front_matter() -> None:
    text = "SPECTER: Document-level Representation\nArman Cohan Sergey Feldman Iz Beltagy\n" + SPECTER
    for window in quote_windows(text):
        assert text[window.start:window.end] == window.text
        assert "Arman" not in window.text


def test_verify_keeps_supported_drops_invented_and_unsupported() -> None:
    scorer = SupportScorer(HashingEmbedder())
    report = VerifyReport()
    kept = verify_sentence("SPECTER can be applied to downstream applications without task-specific fine-tuning [1].",
                           sources(), Verifier(scorer, rects_for=boxes), report=report)
    assert [c.n for c in kept.citations] == [1] and kept.supported
    citation = kept.citations[0]
    assert citation.quote == SPECTER[citation.quote_start:citation.quote_end] and citation.quote in SPECTER
    assert citation.rects == boxes("p1", citation.quote_start, citation.quote_end)
    invented = verify_sentence("S2ORC is a large corpus of 81.1M English-language academic papers [7].", sources(),
                               Verifier(scorer), report=report)
    assert "[7]" not in invented.text and report.invented == 1
    assert [c.n for c in invented.citations] == [2] and invented.citations[0].inserted  # re-attached to S2ORC
    wrong = verify_sentence("Quantum dots emit single photons at cryogenic temperatures [1].", sources(),
                            Verifier(scorer), report=report)
    assert wrong.citations == () and not wrong.supported and report.dropped == 1
    assert "[1]" not in wrong.text


def test_sentences_without_claims_need_no_citation() -> None:
    scorer = SupportScorer(HashingEmbedder())
    (heading,) = verify_text("In summary:", sources(), Verifier(scorer))
    assert heading.supported and not heading.needs_citation


@pytest.mark.slow
def test_fitted_thresholds_hold_on_the_labelled_corpus_pairs() -> None:
    """Precision matters most (a kept citation must be real): at least 0.9 on the hand-labelled pairs."""
    scorer = SupportScorer(minilm())
    predicted = [scorer.supports(p["sentence"], p["passage"]) is not None for p in PAIRS]
    labels = [bool(p["label"]) for p in PAIRS]
    true_positive = sum(p and y for p, y in zip(predicted, labels, strict=True))
    precision = true_positive / max(1, sum(predicted))
    recall = true_positive / sum(labels)
    assert len(PAIRS) >= 80 and sum(labels) >= 40
    assert precision >= 0.9, precision
    assert recall >= 0.8, recall
    for pair in PAIRS:
        match = scorer.best(pair["sentence"], pair["passage"])
        assert match is not None and pair["passage"][match.start:match.end]
