"""A sentence is marked contradicted only when a passage says otherwise, never from a lexical check on a
passage that says the same in other words (real cases seen in written answers, on the real papers).

- SPECTER: the writer's "...up to 5 training triples, each comprised of a query paper PQ, a positive
  paper P+, and a negative paper P−" was struck through in red: another sentence of the passage it
  paraphrases ("2 hard negatives ... and 3 easy negatives") lacks the number 5, and the judge's model
  leant towards "refutes" there.
- ReVerb: the lead-in "The two constraints ReVerb uses are: 1." was judged as a claim about the number 1.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from fixtures.models import minilm

from engine.bibliography import Bibliography
from engine.cite.judge import default_judge
from engine.cite.support import SupportScorer
from engine.cite.verify import Verifier, verify_text
from engine.demo import demo_papers
from engine.ingest.pipeline import parse_pdf
from engine.types import Reference

SPECTER_SENTENCE = ("SPECTER chooses positive and negative papers by constructing up to 5 training triples, each "
                    "comprised of a query paper PQ, a positive paper P+, and a negative paper P−.")


@cache
def scorer() -> SupportScorer:
    return SupportScorer(minilm())


@cache
def passages(pdf: Path) -> tuple[str, ...]:
    return tuple(p.text for p in parse_pdf(pdf).passages)


def references(texts: list[str]) -> dict[int, Reference]:
    return {n: Reference(n, f"p{n}", "d", "library", Bibliography("A paper"), text, page=1)
            for n, text in enumerate(texts, start=1)}


def specter_passage(phrase: str) -> str:
    specter = next(p for p in demo_papers() if p.name == "2020.acl-main.207.pdf")
    return next(text for text in passages(specter) if phrase in " ".join(text.split()))


def test_the_specter_training_triples_sentence_is_not_contradicted_by_the_passage_that_states_it() -> None:
    stating = specter_passage("construct up to 5 training triples")
    judgement = default_judge().judge(SPECTER_SENTENCE, stating)
    assert judgement.verdict != "contradicted", judgement
    [sentence] = verify_text(f"{SPECTER_SENTENCE[:-1]} [1].", references([stating]), Verifier(scorer()))
    assert sentence.support != "contradicted" and not sentence.contradictions, sentence


def test_a_contradicted_mark_names_a_passage_and_its_quote() -> None:
    stating = specter_passage("construct up to 5 training triples")
    [sentence] = verify_text("SPECTER does not construct any training triples for a query paper [1].",
                             references([stating]), Verifier(scorer()))
    assert sentence.support == "contradicted" and not sentence.citations
    [clash] = sentence.contradictions
    assert clash.quote and clash.quote in stating and "training triples" in clash.quote


def test_the_reverb_lead_in_is_not_a_claim_about_the_number_one(papers_dir: Path) -> None:
    stating = next(text for text in passages(papers_dir / "fader11.pdf")
                   if "two simple but surprisingly powerful constraints" in text)
    answer = ("The two constraints that ReVerb uses to identify relation phrases are: 1. A syntactic constraint "
              "that leads the extractor to include nouns in the relation phrase [1]. 2. A lexical constraint [1].")
    lead_in, *items = verify_text(answer, references([stating]), Verifier(scorer()))
    assert lead_in.text.endswith("are:") and not lead_in.needs_citation and lead_in.support == "supported"
    assert [item.text[:3] for item in items] == ["1. ", "2. "]
    assert all(item.support != "contradicted" for item in items), items


@pytest.mark.slow
def test_with_the_writer_reading_every_sentence_the_specter_sentences_are_never_struck_through() -> None:
    """With the 1.5B writer reading every sentence (as on a GPU): the paraphrase is not contradicted, a
    sentence the passage states keeps its citation, and one it does not state loses it."""
    from test_answer_judge_real import writer_path

    from engine.generate.llama import LlamaModel
    from engine.synthesis.support_reader import SupportReader

    reader = SupportReader(LlamaModel(writer_path(), context_size=2048))
    stating = specter_passage("construct up to 5 training triples")
    sources = references([stating])
    answer = (f"{SPECTER_SENTENCE[:-1]} [1]. The positive papers are sampled from the direct citations of the query "
              "paper [1]. SPECTER is trained on 10 million PubMed abstracts [1].")
    paraphrase, stated, invented = verify_text(answer, sources, Verifier(scorer(), reader=reader, veto=reader.vetoes))
    assert paraphrase.support != "contradicted" and not paraphrase.contradictions, paraphrase
    assert stated.support == "supported" and [c.n for c in stated.citations] == [1], stated
    assert invented.support != "supported" and not invented.citations, invented


# SciBERT (a demo paper): the judge's model read this sentence as refuting its own passage (P(refutes) 0.60).
SCIBERT_WINDOW = ("In addition, SCIBERT achieves new SOTA results on ACL-ARC (Cohan et al., 2019), and the NER part "
                  "of SciERC (Luan et al., 2018). For relations in Sci-ERC, our results are not comparable with those "
                  "in Luan et al. (2018) because we are performing relation classification given gold entities, while "
                  "they perform joint entity and relation extraction. We observe that SCIBERT outperforms BERT-Base on "
                  "the multidomain tasks (+0.49 F1 with finetuning and +0.93 F1 without).")
SCIBERT_SENTENCE = ("For relations in Sci-ERC, our results are not comparable with those in Luan et al. (2018) because "
                    "we are performing relation classification given gold entities, while they perform joint entity "
                    "and relation extraction.")


def test_a_sentence_the_passage_states_word_for_word_is_supported_not_contradicted() -> None:
    judged = default_judge().judge_many([(SCIBERT_SENTENCE, SCIBERT_WINDOW), (f"“{SCIBERT_SENTENCE[:-1]}” [2]",
                                                                             SCIBERT_WINDOW)])
    assert [j.verdict for j in judged] == ["supported", "supported"]


def test_a_clause_the_passage_puts_under_a_negation_is_not_taken_as_stated_word_for_word() -> None:
    from engine.cite.judge import states_word_for_word

    window = "It is not true that masks reduce the spread of the virus in schools. Other measures were studied."
    assert not states_word_for_word("Masks reduce the spread of the virus in schools.", window)
    assert states_word_for_word("Other measures were studied in detail.", window) is False
    assert states_word_for_word("it is NOT true that masks reduce the spread of the virus in schools", window)


# A written answer on the 1918 pandemic (COVID-QA check paper 2684): its "higher" is about case-fatality
# rates, the passage's "lower" about the later lineages, which the sentence's second clause states too.
PANDEMIC_WINDOW = ("None of these viral descendants, however, approaches the pathogenicity of the 1918 parent virus. "
                   "Apparently, the porcine H1N1 and H3N2 lineages uncommonly infect humans, and the human H1N1 and "
                   "H3N2 lineages have both been associated with substantially lower rates of illness and death than "
                   "the virus of 1918.")
PANDEMIC_SENTENCE = ("The case-fatality rates were higher than in other influenza pandemics, and the human H1N1 and "
                     "H3N2 lineages had lower rates of illness and death compared to the virus of 1918.")


def test_a_sentence_saying_both_higher_and_lower_is_not_struck_through_for_one_of_them() -> None:
    judged = default_judge().judge_many([(PANDEMIC_SENTENCE, PANDEMIC_WINDOW)])[0]
    assert judged.verdict != "contradicted", judged
    flipped = PANDEMIC_SENTENCE.replace("had lower rates", "had higher rates")  # one direction, the opposite
    assert default_judge().judge_many([(flipped, PANDEMIC_WINDOW)])[0].verdict != "supported"
