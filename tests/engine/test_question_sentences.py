"""A sentence that is itself a question states no answer: it never opens one, unless the question asks what a
paper asks (its research questions, its hypotheses)."""

from __future__ import annotations

import pytest

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.embed import HashingEmbedder
from engine.synthesis.evidence import direct_answers, extract_evidence
from engine.synthesis.question import asks_about_questions, is_question
from engine.types import Reference

# From LONGEVAL (EACL 2023, a bundled demo paper), where a question sentence opened the answer.
ASKING = "RQ1: Does inter-annotator agreement improve using fine-grained annotations?"
ANSWERING = ("Overall, we find that FINE-grained annotations have higher inter-annotator agreement than "
             "COARSE-grained annotations.")


def reference(text: str) -> Reference:
    return Reference(n=1, passage_id="p1", doc_id="d1", source="library", bib=Bibliography("LONGEVAL"), text=text,
                     page=1)


@pytest.mark.parametrize(("sentence", "question"), [
    (ASKING, True), ("Can agreement be improved (RQ2)?", True), ('He asked "why not?"', True),
    ("3.1 RQ1: Does agreement improve?", True), (ANSWERING, False), ("Is it better? We find that it is.", False),
    ("In this paper, we study the detection problem: given a text, can we determine if the model was trained on it?",
     False)])
def test_a_sentence_is_a_question_when_it_ends_with_a_question_mark(sentence: str, question: bool) -> None:
    assert is_question(sentence) is question


@pytest.mark.parametrize(("question", "about"), [
    ("Which research questions does LongEval address?", True), ("What does RQ2 ask?", True),
    ("What hypotheses did the authors test?", True),
    ("What inter-annotator agreement does fine-grained evaluation reach?", False)])
def test_a_question_about_questions_is_told_apart(question: str, about: bool) -> None:
    assert asks_about_questions(question) is about


def test_a_question_sentence_never_opens_the_answer() -> None:
    scorer = SupportScorer(HashingEmbedder(), judge=None)
    evidence = extract_evidence("What inter-annotator agreement does fine-grained evaluation reach?",
                                [reference(f"{ASKING} {ANSWERING}")], scorer)
    assert direct_answers(evidence)[0].text == ANSWERING
    [asking] = [q for q in evidence[0].sentences if q.text == ASKING]
    assert asking.answer == 0.0


def test_a_question_sentence_answers_a_question_about_questions() -> None:
    scorer = SupportScorer(HashingEmbedder(), judge=None)
    evidence = extract_evidence("Which research questions does LongEval address about inter-annotator agreement?",
                                [reference(f"{ASKING} {ANSWERING}")], scorer)
    [asking] = [q for q in evidence[0].sentences if q.text == ASKING]
    assert asking.answer > 0.0
