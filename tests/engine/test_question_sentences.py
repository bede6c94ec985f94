"""Sentences of a kind that answers only questions of a kind: a question states no answer (unless the question
asks what a paper asks), and acknowledgements answer only a question about funding or thanks, and then first."""

from __future__ import annotations

import pytest

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.embed import HashingEmbedder
from engine.synthesis.evidence import direct_answers, extract_evidence
from engine.synthesis.question import asks_about_questions, is_question
from engine.text.back_matter import answers_back_matter_question
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


# From SPECTER's last page, its acknowledgements, after a sentence that shares the question's words.
SCIENCE = "The work on SPECTER was carried out at the Allen Institute for AI and trained on citations."
THANKS = ("We thank Kyle Lo, Daniel King and Oren Etzioni for helpful research discussions and the anonymous "
          "reviewers for comments and suggestions.")
FUNDING = ("This work was supported in part by ONR grant N00014-18-1-2193, and the University of Washington "
           "WRF/Cable Professorship.")


@pytest.mark.parametrize(("question", "opening"), [
    ("Who funded the work on SPECTER?", FUNDING), ("Which grants supported SPECTER?", FUNDING),
    ("Whom do the SPECTER authors thank?", THANKS), ("How is SPECTER trained?", SCIENCE)])
def test_a_question_about_funding_or_thanks_opens_with_back_matter_of_its_kind(question: str, opening: str) -> None:
    # The reader, trained on questions about findings, scores acknowledgements low: without the rule the science
    # sentence, which shares "work on SPECTER", opens the answer to "who funded" (0.999 against 0.41).
    passage = f"{SCIENCE}\nAcknowledgements\n{THANKS} {FUNDING}"
    evidence = extract_evidence(question, [reference(passage)], SupportScorer(HashingEmbedder(), judge=None))
    best = max(evidence[0].sentences, key=lambda q: q.answer)
    assert best.text == opening
    assert opening in direct_answers(evidence)[0].text  # with the sentence it leans on ("This work ...")


def test_only_back_matter_of_the_asked_kind_answers() -> None:
    assert answers_back_matter_question("Who funded SPECTER?", FUNDING, back_matter=True)
    assert not answers_back_matter_question("Who funded SPECTER?", THANKS, back_matter=True)
    assert answers_back_matter_question("Whom do the authors thank?", THANKS, back_matter=True)
    assert not answers_back_matter_question("How is SPECTER trained?", FUNDING, back_matter=True)
    assert not answers_back_matter_question("Who funded SPECTER?", "Funding rates rose in 2020.", back_matter=False)
