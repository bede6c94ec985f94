"""The support judge's deterministic parts: number / negation / direction checks, clause splitting, input rules."""

from __future__ import annotations

import pytest

from engine.cite.checks import (
    check,
    direction_clash,
    list_items,
    main_clause,
    misplaced_numbers,
    missing_numbers,
    negation_clash,
    numbers,
    other_numbered_names,
    unstated_addition,
)
from engine.cite.claims import MAX_CLAIM_CHARS, looks_english, prepare_claim, prepare_evidence
from engine.errors import ClaimError, EngineError

WINDOW = ("S2ORC is a large corpus of 81.1M English-language academic papers, and its full text improves "
          "accuracy on citation recommendation by 3.5 points.")


def test_numbers_are_normalised_and_markers_ignored() -> None:
    assert numbers("1,000 papers, 0.50 recall and .5 precision [3]") == ["1000", "0.5", "0.5"]
    assert numbers("We used 12 layers [1, 2].") == ["12"]


def test_every_number_of_the_claim_must_be_in_the_window() -> None:
    assert missing_numbers("S2ORC has 81.1M papers.", WINDOW) == []
    assert missing_numbers("S2ORC has 18.1M papers.", WINDOW) == ["18.1"]
    result = check("It improves accuracy by 5.3 points.", WINDOW)
    assert result is not None and result.kind == "number" and "5.3" in result.reason and not result.contradicts
    assert check("It improves accuracy by 3.5 points.", WINDOW) is None


def test_the_digits_of_a_name_are_not_a_count() -> None:
    # HealthVer's claims say "COVID-19" where the abstract says "the virus": the 19 is part of a name.
    assert numbers("COVID-19 and SARS-CoV-2 reached 19 countries; IL-6 rose 3-fold") == ["19", "3"]
    assert check("COVID-19 spreads through respiratory droplets.",
                 "The virus spreads through respiratory droplets between people in close contact.") is None
    # A number after a hyphen that follows a number or a space is still a number (a range, a minus).
    assert numbers("models 1-4 scored -2") == ["1", "4", "2"]
    # The name written with a space is the window's name, not a count it leaves out; a count still is one.
    assert missing_numbers("Covid 19 is different from the flu.", "COVID-19 differs from influenza.") == []
    assert missing_numbers("There were 19 cases.", "COVID-19 cases were counted.") == ["19"]


def test_a_name_with_other_digits_is_another_thing() -> None:
    assert other_numbered_names("IL-6 levels rose in severe cases.", "IL-8 levels rose in severe cases.") \
        == [("IL-6", "IL-8")]
    assert other_numbered_names("H1N1 caused the 2009 pandemic.", "H3N2 caused the 2009 pandemic.") \
        == [("H1N1", "H3N2")]
    result = check("IL-6 levels rose in severe cases.", "IL-8 levels rose in severe cases.")
    assert result is not None and result.kind == "number" and result.reason == "the passage names IL-8, not IL-6"
    assert not result.contradicts
    # The same name written another way, the name among others, or no such name at all: no clash.
    assert other_numbered_names("Covid19 began in Wuhan.", "COVID-19 began in Wuhan.") == []
    assert other_numbered_names("IL-6 rose.", "IL-6 and IL-8 rose.") == []
    assert other_numbered_names("IL-6 rose.", "Interleukin levels rose.") == []
    # Unless the window writes the same letters the claim's way with other digits: there the hyphen is a minus.
    assert other_numbered_names("PL from the lateral wells QW-2, QW2", "PL from the lateral wells QW-1, QW2") \
        == [("QW-2", "QW-1")]


def test_a_number_the_window_gives_for_something_else_is_not_support() -> None:
    window = "The correlation was weak (r = 0) for models 1-4, and models 6 and 7 were kept."
    assert misplaced_numbers("The correlation was weak (r = 1).", window) == ["1"]
    assert misplaced_numbers("They kept models 5 and 7.", "Models 6 and 7 were kept; 5 runs failed.") == ["5"]
    assert misplaced_numbers("The correlation was weak (r = 0).", window) == []
    assert misplaced_numbers("They kept models 6 and 7.", window) == []
    result = check("The correlation was weak (r = 1).", window)
    assert result is not None and result.kind == "number" and "something else" in result.reason
    # A counted noun after the number names nothing: one passage counts papers many times.
    papers = "We surveyed 162 papers; 119 papers (73%) run no human evaluation."
    assert misplaced_numbers("The authors surveyed 162 papers on summarization.", papers) == []
    # Paraphrase: the same value for the same thing, in another order.
    assert misplaced_numbers("SPECTER reaches an average of 80.0 on SciDocs.",
                             "On SciDocs, SPECTER reaches 80.0 on average, against 75.2 for SciBERT.") == []


def test_an_added_clause_must_be_in_the_window_too() -> None:
    added = "S2ORC is a large corpus of academic papers, which shows that it outperforms all prior work."
    assert unstated_addition(added, WINDOW)
    result = check(added, WINDOW)
    assert result is not None and result.kind == "added" and not result.contradicts
    stated = "S2ORC is a large corpus of academic papers, and its full text improves citation recommendation."
    assert not unstated_addition(stated, WINDOW)
    assert not unstated_addition("S2ORC is a large corpus of academic papers.", WINDOW)


def test_a_negation_is_scoped_to_its_clause() -> None:
    window = "The big bang is not a single event, so the average over cosmic time is different from the other."
    assert negation_clash("The big bang is not a single event, so the average over cosmic time is not different.",
                          window)
    assert not negation_clash("The big bang is not a single event.", window)


def test_negation_must_agree_in_polarity() -> None:
    assert negation_clash("Its full text does not improve accuracy on citation recommendation.", WINDOW)
    assert not negation_clash("Its full text improves accuracy on citation recommendation.", WINDOW)
    negated_window = "The method does not require labelled data for training."
    assert negation_clash("The method requires labelled data for training.", negated_window)
    assert not negation_clash("The method does not need labelled data for training.", negated_window)
    result = check("Its full text does not improve accuracy on citation recommendation.", WINDOW)
    assert result is not None and result.kind == "negation" and result.contradicts


def test_a_negation_said_of_just_what_the_claim_names_clashes_even_on_one_negated_word() -> None:
    """One negated word the claim states is enough when the negated clause is said of the claim's subject."""
    window = ("Completed map tasks are re-executed on a failure because their output is stored on the local disk. "
              "Completed reduce tasks do not need to be re-executed since their output is stored in a global file "
              "system.")
    assert negation_clash("MapReduce re-executes completed reduce tasks when a worker fails.", window)
    assert not negation_clash("MapReduce re-executes completed map tasks when a worker fails.", window)
    # What is negated is the verb after the cue: "processing" follows "not optimized for".
    assert not negation_clash("S2ORC processes PDFs with ScienceParse and GROBID.",
                              "ScienceParse and GROBID are not optimized for processing nonpaper documents.")
    # One subject word in common is not enough: most negated clauses of a passage share one with its claims.
    assert not negation_clash("Reduce workers re-execute a task on a failure.",
                              "Completed tasks do not need to be re-executed.")


def test_direction_words_must_agree() -> None:
    assert direction_clash("Its full text lowers accuracy on citation recommendation.", WINDOW) is False
    assert direction_clash("Dropout leads to lower error on CIFAR.", "Dropout leads to higher error on CIFAR.")
    assert direction_clash("Pruning reduces latency.", "Pruning increases latency on GPUs.")
    assert not direction_clash("Pruning reduces latency.", "Pruning reduced the latency on GPUs.")
    assert not direction_clash("A gives higher recall.", "A gives higher recall but lower precision.")


def test_every_item_of_a_listed_claim_must_be_named() -> None:
    """A writer's invented list on the passage's topic: the passage names none of the symptoms."""
    claim = ("The symptoms of COVID-19 associated with the highest levels of KIR+ CD8+ T cells include fever, "
             "cough, shortness of breath, and fatigue [1].")
    window = ("Elevated levels of KIR+CD8+ T cells were observed in COVID-19 patients and correlated with "
              "vasculitis.")
    assert list_items(claim)[1:] == ["cough", "shortness of breath", "fatigue"]
    result = check(claim, window)
    assert result is not None and result.kind == "list" and "cough" in result.reason
    stated = "The models compared were BERT, RoBERTa and SciBERT."
    assert check(stated, "We compare three encoders: BERT, RoBERTa and SciBERT, on SciDocs.") is None
    assert list_items("SPECTER is pretrained on the citation graph.") == []


def test_main_clause_splits_an_added_clause() -> None:
    claim = ("The ScienceParse system is trained on a snapshot of PubMed Central, which provides a large corpus "
             "for training SPECTER.")
    assert main_clause(claim) == "The ScienceParse system is trained on a snapshot of PubMed Central."
    assert main_clause("SPECTER is trained on citations.") == ""


def test_empty_or_wordless_claims_are_refused_with_advice() -> None:
    for bad in ("", "   \n", "?!", "12 34"):
        with pytest.raises(ClaimError, match="claim") as caught:
            prepare_claim(bad)
        assert isinstance(caught.value, EngineError)
    with pytest.raises(ClaimError, match="evidence is empty"):
        prepare_evidence("  ")


def test_a_long_claim_is_cut_at_a_word_and_the_cut_is_said() -> None:
    claim = " ".join(f"SPECTER embeds scientific paper {i} with citation-informed transformers."
                     for i in range(300))[:20000]
    text, notes = prepare_claim(claim)
    assert len(text) <= MAX_CLAIM_CHARS and claim.startswith(text) and not text.endswith(" ")
    assert len(notes) == 1 and "20,000" in notes[0] and f"first {len(text)}" in notes[0]


def test_a_sentence_said_twice_is_judged_once_with_a_note() -> None:
    """The judge read "Rotavirus codes proteins. Rotavirus codes proteins." as supported by 14 of 20 unrelated
    passages; said once, by none."""
    text, notes = prepare_claim("MapReduce runs on clusters. SPECTER uses citations.  MapReduce runs on  clusters. "
                                "S2ORC has papers.")
    assert text == "MapReduce runs on clusters. SPECTER uses citations. S2ORC has papers."
    assert any("repeats a sentence" in note for note in notes)
    assert prepare_claim("SPECTER uses citations. S2ORC has papers.") == ("SPECTER uses citations. S2ORC has papers.",
                                                                         [])


def test_a_question_is_judged_with_a_note() -> None:
    text, notes = prepare_claim("Is SPECTER trained on the citation graph?")
    assert text.endswith("?") and any("question" in note for note in notes)


def test_evidence_in_another_language_gets_a_note() -> None:
    german = ("Die Methode verbessert die Genauigkeit der Zitationsempfehlung deutlich, weil sie den Volltext "
              "der Artikel nutzt.")
    chinese = "该方法利用文章全文，显著提高了引文推荐的准确性。"
    english = "The method improves the accuracy of citation recommendation because it uses the full text."
    assert not looks_english(german) and not looks_english(chinese) and looks_english(english)
    _, notes = prepare_evidence(german)
    assert notes and "English" in notes[0]
    assert prepare_evidence(english)[1] == []
