"""A paper's name for its own system: found in its title, read in place of "our model" when a question names it."""

from __future__ import annotations

import pytest

from engine.bibliography import Bibliography
from engine.cite.self_name import as_read_for, asks_about, named, system_name
from engine.cite.support import SupportScorer
from engine.embed import HashingEmbedder
from engine.synthesis.evidence import extract_evidence
from engine.types import Reference

SPECTER = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"


@pytest.mark.parametrize(("title", "name"), [
    (SPECTER, "SPECTER"),
    ("S2ORC: The Semantic Scholar Open Research Corpus", "S2ORC"),
    ("PaperMage: A Unified Toolkit for Processing, Representing, and Manipulating Visually-Rich Documents",
     "PaperMage"),
    ("Multi-LexSum: Real-World Summaries of Civil Rights Lawsuits at Multiple Granularities", "Multi-LexSum"),
    ("Slide-seq: A scalable technology for measuring genome-wide expression", "Slide-seq"),
    # Words of a sentence, a title with no name, and a virus that is not the paper's system.
    ("Beyond Summarization: Designing AI Support for Real-World Expository Writing Tasks", None),
    ("Review: the immune response to coronaviruses", None),
    ("Paper Plain: Making Medical Research Papers Approachable", None),
    ("COVID-19: a review of the first months", None),
    ("Construction of the Literature Graph in Semantic Scholar", None),
    ("", None),
    (None, None),
])
def test_the_name_a_title_gives_its_system(title: str | None, name: str | None) -> None:
    assert system_name(title) == name


def test_a_question_names_the_system_as_a_word_in_any_case() -> None:
    assert asks_about("how is specter trained?", "SPECTER")
    assert asks_about("What data does S2ORC hold?", "S2ORC")
    assert not asks_about("How are SPECTERS compared?", "SPECTER")
    assert not asks_about("How is it trained?", "SPECTER")
    assert not asks_about("How is SPECTER trained?", None)


def test_self_references_are_written_as_the_name_and_nothing_else_changes() -> None:
    text = ("To train our model, we use a subset. The proposed method beats our proposed approach. "
            "Our dataset is public; our model-based baseline and the model are not ours to rename.")
    assert named(text, "SPECTER") == ("To train SPECTER, we use a subset. SPECTER beats SPECTER. "
                                      "SPECTER is public; our model-based baseline and the model are not ours "
                                      "to rename.")


def test_only_a_question_that_names_the_system_reads_the_name() -> None:
    sentence = "To train our model, we use a subset of the Semantic Scholar corpus."
    assert as_read_for("How is SPECTER trained?", SPECTER, sentence).startswith("To train SPECTER,")
    assert as_read_for("How is the model trained?", SPECTER, sentence) == sentence
    assert as_read_for("How is SPECTER trained?", "Construction of the Literature Graph", sentence) == sentence


def test_the_sentence_that_says_our_model_answers_a_question_that_names_the_system() -> None:
    """The shipped reader, on SPECTER's own sentences: "our model" is SPECTER once the title says so, and the
    quote shown is the sentence as the paper writes it."""
    passing = ("We trained our own 300 dimensional fasttext embeddings on a corpus of around 3.1B tokens from "
               "scientific papers which is similar in size to the SciBERT corpus.")
    training = ("To train our model, we use a subset of the Semantic Scholar corpus consisting of about 146K "
                "query papers with their corresponding outgoing citations.")
    passage = f"{passing} {training}"
    question = "How is SPECTER trained?"
    scorer = SupportScorer(HashingEmbedder(), judge=None)

    def opening(title: str) -> str:
        ref = Reference(n=1, passage_id="p1", doc_id="d1", source="library", bib=Bibliography(title),
                        text=passage, page=1)
        evidence = extract_evidence(question, [ref], scorer, quotes_per_passage=1)
        best = evidence[0].best
        assert best is not None
        return best.text

    assert opening(SPECTER) == training  # verbatim: "our model", not the name read in its place
    assert opening("Document-level representation learning") == passing  # without the name it is not read so
