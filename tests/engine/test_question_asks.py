"""A question that asks two things gets an answer to each, in the order asked: the splitting of the
question, and the evidence's direct answers read by the shipped answer reader."""

from __future__ import annotations

import pytest
from fixtures.models import minilm

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.embed import HashingEmbedder
from engine.synthesis.digest import ANSWER_HEADING, digest_sentences
from engine.synthesis.evidence import direct_answers, extract_evidence
from engine.synthesis.pipeline import AskOptions, ask
from engine.synthesis.question import asks
from engine.types import AnswerMode, Reference, SearchHit


@pytest.mark.parametrize(("question", "expected"), [
    ("How is SPECTER trained, and what data does it learn from?",
     ("How is SPECTER trained?", "What data does SPECTER learn from?")),
    ("What is S2ORC? How many papers does it contain?", ("What is S2ORC?", "How many papers does S2ORC contain?")),
    ("What is Compound Topological Index and how is it related to the risk of disease transmission?",
     ("What is Compound Topological Index?", "How is it related to the risk of disease transmission?")),
    ("What is the effect of X on Y? What is its mechanism; and how was it measured?",
     ("What is the effect of X on Y?", "What is its mechanism?", "How was it measured?")),
    # "they" is as often the things asked about as the name: left as it is.
    ("How is the model trained, and on what data was it collected?",
     ("How is the model trained?", "On what data was it collected?")),
    ("Which cells express IL-6, and what do they secrete?", ("Which cells express IL-6?", "What do they secrete?")),
])
def test_a_question_that_asks_several_things_is_split_into_its_asks(question: str, expected: tuple[str, ...]) -> None:
    assert asks(question) == expected


def test_a_pasted_list_of_questions_is_read_as_at_most_four_asks() -> None:
    pasted = " ".join(f"What is the effect of drug {n} on mice?" for n in range(1, 11))
    split = asks(pasted)
    assert len(split) == 4 and split[:3] == ("What is the effect of drug 1 on mice?",
                                             "What is the effect of drug 2 on mice?",
                                             "What is the effect of drug 3 on mice?")
    assert split[3].startswith("What is the effect of drug 4 on mice?") and split[3].endswith("drug 10 on mice?")


@pytest.mark.parametrize("question", [
    "How many papers does S2ORC contain?",
    # A clause of the first question, not a second one:
    "What would be the benefit of learning more about bat's defenses and how they drive virus evolution?",
    "What is the time lag between when transmission changes occur and when their impact can be observed?",
    "What did the ECDC and WHO regional office ask the countries?",  # two bodies, not "and who ...?"
    "Is A larger than B, or is it smaller?",  # one choice between two answers
    "When did we discover that SARS-CoV-2, which causes COVID-19, was a novel coronavirus?",  # a relative clause
    "How and why?",  # too short to be two questions
    "How is the model trained, and on what data?",  # "On what data?" alone does not say what it asks about
])
def test_a_question_that_asks_one_thing_stays_whole(question: str) -> None:
    assert asks(question) == (" ".join(question.split()),)


HOW = ("Starting from the trained SciBERT model, we pretrain the Transformer parameters on the citation "
       "objective to learn paper representations that capture document-level relatedness.")
DATA = ("SPECTER learns from citation data: 146K query papers and the papers they cite, from the Semantic Scholar "
        "corpus.")
ABOUT = ("Recent representation learning methods in NLP rely on training large neural language models on "
         "unsupervised data.")


def reference(text: str, n: int) -> Reference:
    return Reference(n=n, passage_id=f"p{n}", doc_id="d1", source="library", bib=Bibliography("SPECTER"),
                     text=text, page=n)


def test_the_answer_states_each_ask_in_the_order_asked() -> None:
    """The shipped reader reads each ask on its own; the digest's answer section quotes the sentence that
    answers the first, then the one that answers the second, whatever order the passages come in."""
    references = [reference(f"{ABOUT} {DATA}", 1), reference(HOW, 2)]
    evidence = extract_evidence("How is SPECTER trained, and what data does it learn from?", references,
                                SupportScorer(HashingEmbedder(), judge=None), quotes_per_passage=1)
    direct = direct_answers(evidence)
    assert [q.text for q in direct] == [HOW, DATA]
    assert [q.ask for q in direct] == [0, 1]
    best = next(iter(direct_answers(evidence)), None)
    assert best is not None and best.text == HOW
    sentences, headings = digest_sentences(direct, [], {r.n: r for r in references})
    assert headings == (ANSWER_HEADING,) and [s.section for s in sentences] == [0, 0]
    assert HOW[:40] in sentences[0].text and DATA[:40] in sentences[1].text


def test_an_ask_is_answered_by_its_best_sentence_even_when_its_passage_quotes_another_asks() -> None:
    """One passage answers both asks; it quotes only the sentence that answers the second best. The first ask's
    answer is still its own best sentence there, not a weaker quote of another passage."""
    references = [reference(f"{DATA} {HOW}", 1), reference(ABOUT, 2)]
    evidence = extract_evidence("How is SPECTER trained, and what data does it learn from?", references,
                                SupportScorer(HashingEmbedder(), judge=None), quotes_per_passage=1)
    assert [q.text for q in evidence[0].quotes] == [DATA]  # the passage's one quote answers the second ask
    assert [q.text for q in direct_answers(evidence)] == [HOW, DATA]


def test_a_question_that_asks_one_thing_has_one_direct_answer() -> None:
    references = [reference(f"{ABOUT} {DATA}", 1), reference(HOW, 2)]
    evidence = extract_evidence("How is SPECTER trained?", references, SupportScorer(HashingEmbedder(), judge=None))
    direct = direct_answers(evidence)
    assert [q.text for q in direct] == [HOW]


def test_the_digest_of_a_two_part_question_answers_both_parts_under_its_answer_heading() -> None:
    """Through the whole digest path (search, evidence, plan, numbering): the Answer section quotes the
    sentence on training, then the one on data, each cited; the themes do not repeat them."""
    passages = [f"We propose SPECTER, a model of scientific documents. {ABOUT} {DATA}", HOW]
    # The bundled embedder, as in use: the hand score weighs in beside the reader, and the hashing embedder's
    # cosine is no semantic similarity.
    found = [SearchHit(f"p{i}", "d1", "library", Bibliography("SPECTER"), text, score=1.0 / (i + 1), page=i + 1)
             for i, text in enumerate(passages)]
    answer = ask("How is SPECTER trained, and what data does it learn from?", retrieve=lambda _q, k: found[:k],
                 scorer=SupportScorer(minilm()), options=AskOptions(relevance_threshold=0.1, mode="digest"))
    assert answer.mode == AnswerMode.DIGEST and answer.sections[0] == ANSWER_HEADING
    opening = [s.text for s in answer.sentences if s.section == 0]
    assert len(opening) == 2 and HOW[:40] in opening[0] and DATA[:40] in opening[1], opening
    assert all(s.citations for s in answer.sentences if s.section == 0)
    later = [s.text for s in answer.sentences if s.section > 0]
    assert not any(HOW[:40] in text or DATA[:40] in text for text in later)
