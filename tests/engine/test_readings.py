"""The second reading of a claim: the sources' abbreviations, and "The X that Y is Z" turned round."""

from __future__ import annotations

from engine.cite.readings import abbreviations, second_reading


def test_abbreviations_defined_in_the_text_are_found_and_the_rest_left() -> None:
    found = abbreviations(["Its C-terminal domain binds cyclic tetra-adenylate (cA4 ), activating defence.",
                           "We use natural language inference (NLI) models (see Fig. 2) and BERT (BERT)."])
    assert found == {"cyclic tetra-adenylate": "cA4", "natural language inference": "NLI"}


def test_a_specificational_sentence_is_turned_round_in_the_sources_words() -> None:
    aliases = {"cyclic tetra-adenylate": "cA4"}
    claim = "The metal ion that coordinates binding of cyclic tetra-adenylate to Csx23 in Vibrio cholerae is sodium."
    assert second_reading(claim, aliases) == "Sodium coordinates binding of cA4 to Csx23 in Vibrio cholerae."
    assert second_reading("The model that performs best is SPECTER.", {}) == "SPECTER performs best."


def test_a_claim_with_nothing_to_change_has_no_second_reading() -> None:
    assert second_reading("SPECTER can be applied without task-specific fine-tuning.", {"natural language": "NL"}) == ""
    assert second_reading("", {}) == ""


def test_a_number_is_read_as_the_passage_writes_the_same_value() -> None:
    passage = "3 The S2ORC dataset The resulting corpus consists of 81.1M papers, with 8.1M full texts."
    assert second_reading("S2ORC contains 81.1 million papers.", {}, passage) == "S2ORC contains 81.1M papers."
    assert second_reading("About 3 thousand died.", {}, "about 3,000 deaths") == "About 3,000 died."
    # Another value, a concentration's "M" and a year are left as they are.
    assert second_reading("S2ORC contains 81 million papers.", {}, passage) == ""
    assert second_reading("We grew 0.5 million cells.", {}, "in 0.5 M NaCl") == ""
    assert second_reading("It ran 2,020 trials.", {}, "in 2020") == ""


def test_a_true_claim_written_with_another_number_notation_is_supported() -> None:
    """Read as it stood, the judge's model found "81.1 million" against "81.1M" a contradiction (P 0.53)."""
    from engine.cite.judge import default_judge

    judgement = default_judge().judge("S2ORC contains 81.1 million papers.", "S2ORC consists of 81.1M papers.")
    assert judgement.verdict == "supported", judgement
