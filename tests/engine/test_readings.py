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
