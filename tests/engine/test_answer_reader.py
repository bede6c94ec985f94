"""The answer reader: what it reads, the shipped model on sentences it was never trained on, how the
evidence uses it, and what happens without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.bibliography import Bibliography
from engine.cite.reader import (
    MAX_NEIGHBOUR_CHARS,
    NEIGHBOURS_SEPARATOR,
    AnswerReader,
    default_reader,
    default_reader_folder,
    reader_text,
)
from engine.cite.support import SupportScorer
from engine.embed import HashingEmbedder
from engine.errors import ModelFileError, ModelNotFoundError
from engine.synthesis.evidence import direct_answers, extract_evidence, hand_scores
from engine.synthesis.pipeline import AskOptions, ask
from engine.synthesis.quotable import restates_title
from engine.types import Answer, AnswerMode, Reference, SearchHit

# From SPECTER (ACL 2020, a bundled demo paper): machine learning, a field the reader never trained on.
QUESTION = "How is SPECTER trained?"
ABOUT = ("Recent representation learning methods in NLP rely on training large neural language models on "
         "unsupervised data.")
ANSWERS = ("Starting from the trained SciBERT model, we pretrain the Transformer parameters on the citation "
           "objective to learn paper representations that capture document-level relatedness.")
UNRELATED = "The appendix lists the hardware and software versions used in every experiment reported here."


def reference(text: str, n: int = 1) -> Reference:
    return Reference(n=n, passage_id=f"p{n}", doc_id=f"d{n}", source="library", bib=Bibliography("SPECTER"),
                     text=text, page=1)


def test_the_sentence_comes_first_and_its_neighbours_after_it() -> None:
    text = reader_text("  The answer   is here. ", "Before it.", "After it.")
    assert text == f"The answer is here.{NEIGHBOURS_SEPARATOR}Before it. After it."
    assert reader_text("Alone.") == "Alone."
    long = reader_text("Short.", "x" * 1000, "y" * 1000)
    assert long.startswith("Short.") and long.count("x") == MAX_NEIGHBOUR_CHARS == long.count("y")


def test_a_missing_reader_names_what_is_missing_and_how_to_rebuild_it(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match=r"answer reader.*model\.int8\.onnx.*train_reader\.py"):
        AnswerReader(tmp_path)


def test_the_shipped_reader_ranks_the_answering_sentence_above_one_about_the_question() -> None:
    scores = default_reader().scores(QUESTION, [ABOUT, UNRELATED, ANSWERS])
    assert scores[2] > scores[0] and scores[2] > scores[1], scores


def test_the_evidence_opens_with_the_sentence_the_reader_finds_answers() -> None:
    passage = f"{ABOUT} {UNRELATED} {ANSWERS}"
    with_reader = extract_evidence(QUESTION, [reference(passage)], SupportScorer(HashingEmbedder(), judge=None))
    best = next(iter(direct_answers(with_reader)), None)
    assert best is not None and best.text == ANSWERS
    assert 0.0 <= best.answer <= 1.0  # a share of the best score keeps its meaning (second quotes, themes)


def test_without_the_reader_the_hand_weighted_score_ranks() -> None:
    passage = f"{ABOUT} {UNRELATED} {ANSWERS}"
    scorer = SupportScorer(HashingEmbedder(), judge=None, reader=None)
    evidence = extract_evidence(QUESTION, [reference(passage)], scorer)
    texts = [q.text for q in evidence[0].sentences]
    hand = hand_scores(QUESTION, texts, scorer)
    assert [q.answer for q in evidence[0].sentences] == pytest.approx([float(h) for h in hand])


def test_reading_only_the_best_sentences_by_hand_score_leaves_the_rest_unread() -> None:
    passage = f"{ABOUT} {UNRELATED} {ANSWERS}"
    scorer = SupportScorer(HashingEmbedder(), judge=None)
    evidence = extract_evidence(QUESTION, [reference(passage)], scorer, read_limit=1)
    read = [q for q in evidence[0].sentences if q.answer > 0.0]
    assert len(read) == 1
    unread = [q for q in evidence[0].sentences if q.answer == 0.0]
    assert len(unread) == 2


def test_the_writer_reads_each_passage_s_answering_sentence_first() -> None:
    from engine.synthesis.prompts import evidence_block

    passage = f"{ABOUT} {UNRELATED} {ANSWERS}"
    evidence = extract_evidence(QUESTION, [reference(passage)], SupportScorer(HashingEmbedder(), judge=None))
    block = evidence_block(list(evidence[0].quotes), {1: "SPECTER"})
    assert block.startswith('[1] SPECTER: "Starting from the trained SciBERT model'), block


def _ask(question: str) -> Answer:
    passages = [f"{ABOUT} {UNRELATED} {ANSWERS}", "We propose SPECTER, a new method to generate document-level "
                "embedding of scientific documents based on pretraining a Transformer language model on citations."]
    found = [SearchHit(f"p{i}", f"d{i}", "library", Bibliography(f"Paper {i}"), text, score=1.0 / (i + 1), page=1)
             for i, text in enumerate(passages)]
    return ask(question, retrieve=lambda _q, k: found[:k], scorer=SupportScorer(HashingEmbedder()),
               options=AskOptions(relevance_threshold=0.1, mode="digest"))


def test_the_digest_opens_with_the_answering_sentence() -> None:
    answer = _ask(QUESTION)
    assert answer.mode == AnswerMode.DIGEST and answer.sentences[0].section == 0
    assert answer.text.startswith(f"“{ANSWERS}” [1]"), answer.text


def test_a_damaged_reader_is_named_with_how_to_mend_it(tmp_path: Path) -> None:
    for name in ("tokenizer.json", "reader.json"):
        (tmp_path / name).write_bytes((default_reader_folder() / name).read_bytes())
    (tmp_path / "model.int8.onnx").write_bytes(b"not an onnx graph")
    with pytest.raises(ModelFileError, match=r"answer reader's model is damaged.*reinstall Quire"):
        AnswerReader(tmp_path)


def test_the_paper_s_title_run_into_its_next_line_is_never_a_quote() -> None:
    # COVID-QA's check paper: its title line, run into the next, opened the answer to a question it names.
    title = "Detectable 2019-nCoV viral RNA in blood is a strong indicator for the further clinical severity"
    passage = (f"{title} SHA: 77b0c98d1a2ca46b219ad090074814c387c80d8f\n"
               "The presence of viral RNA outside of the respiratory tract might herald the severity of the disease. "
               "In 2019-nCoV severity, detectable viral RNA in blood was a strong indicator.")
    found = Reference(n=1, passage_id="p1", doc_id="d1", source="library", bib=Bibliography(title), text=passage,
                      page=1)
    quoted = [q.text for q in extract_evidence("What test indicates the severity of 2019-nCoV?", [found],
                                               SupportScorer(HashingEmbedder(), judge=None))[0].sentences]
    assert quoted and not any(q.startswith("Detectable") for q in quoted), quoted
    # A sentence that names the title and says more stays a quote.
    assert not restates_title("In this study, detectable 2019-nCoV viral RNA in blood was measured in 57 patients "
                              "admitted with pneumonia, and six progressed to a severe stage within a week.", title)


def test_a_sentence_that_a_title_line_opens_is_quoted_from_where_it_goes_on() -> None:
    """A first page's header, title and byline run into the first sentence; the quote starts after the title,
    and a title followed only by its authors is no quote. The paper naming itself in its prose stays whole."""
    from engine.synthesis.quotable import quotable_spans

    title = "Autoregulation of the LIM kinases by their PDZ domain"
    opened = ("Article https://doi.org/10.1038/s41467-023-44148-4 Autoregulation of the LIM kinases by their PDZ "
              "domain LIM domain kinases (LIMK) are important regulators of actin cytoskeletal remodeling.")
    byline = f"{title} Jameson R. Averill† , Jackson C. Lin† , John Jung and Hunmin Jung *"
    named = ("To address these issues, we introduce the autoregulation of the LIM kinases by their PDZ domain, a "
             "mechanism of actin remodeling in cells.")
    for text, quoted in ((opened, ["LIM domain kinases (LIMK) are important regulators of actin cytoskeletal "
                                   "remodeling."]), (byline, []), (named, [named])):
        reference = Reference(n=1, passage_id="p1", doc_id="d1", source="library", bib=Bibliography(title),
                              text=text, page=1)
        assert [text[start:end] for start, end, _ in quotable_spans(reference, False)] == quoted


class _ConfidentReader:
    """A reader sure of every sentence (logits over 10), surest of the one naming SciBERT."""

    hand_weight = 0.0

    def scores(self, _question: str, texts: list[str]) -> list[float]:
        return [16.0 if "SciBERT" in text else 11.0 for text in texts]


def test_the_best_answer_wins_when_every_sentence_scores_high_not_the_first_passage() -> None:
    # Squashed to 0..1 and rounded, 11 and 16 both became 1.0 and the first passage's sentence won the tie.
    references = [reference(f"{ABOUT} {UNRELATED}", 1), reference(ANSWERS, 2)]
    found = extract_evidence(QUESTION, references, SupportScorer(HashingEmbedder(), judge=None,
                                                                 reader=_ConfidentReader()))  # type: ignore[arg-type]
    best = next(iter(direct_answers(found)), None)
    assert best is not None and best.n == 2 and best.text == ANSWERS
