"""Check a Claim in the app: when no passage supports or contradicts the claim, the closest passages read
are listed with their quotes, marked "not stated here"; otherwise they are left out as before."""

from __future__ import annotations

from engine.cite.claims import CheckedPassage, ClaimCheck
from ui.claim_check import check_html, closest_read


def passage(verdict: str, quote: str, index: int) -> CheckedPassage:
    return CheckedPassage(verdict, 0.01, 0.0, quote, 0, len(quote), f"p{index}", "d", "library",
                          "SPECTER: Document-level Representation Learning", index, "the passage does not state this")


READ = [passage("unsupported", quote, i) for i, quote in enumerate((
    "To train our model, we use a subset of the Semantic Scholar corpus consisting of about 146K query papers.",
    "We also release our training set (hundreds of thousands of paper titles, abstracts and citations).",
    "SPECTER builds embeddings from the title and abstract of a paper.",
    "Table 2: Ablations."), start=1)]


def test_with_nothing_for_or_against_the_closest_passages_are_shown_with_their_quotes() -> None:
    html = check_html("SPECTER is trained on 10 million PubMed abstracts.", READ)
    assert "Closest passages read" in html and html.count("not stated here") == 3
    assert "146K query papers" in html and "Table 2: Ablations." not in html  # the three closest, no more
    check = ClaimCheck("SPECTER is trained on 10 million PubMed abstracts.", tuple(READ))
    assert [p.passage_id for p in check.closest()] == ["p1", "p2", "p3"] and closest_read(READ) == [0, 1, 2]


def test_when_a_passage_supports_the_claim_the_others_are_not_listed() -> None:
    supported = passage("supported", "SPECTER is trained on citation triplets.", 9)
    html = check_html("SPECTER is trained on citation triplets.", [supported, *READ])
    assert "Closest passages read" not in html and "not stated here" not in html
    assert ClaimCheck("x", (supported, *READ)).closest() == []


def test_the_app_and_quire_check_show_the_same_closest_passages_in_the_same_words() -> None:
    import engine.cite.claims as engine_side
    import ui.claim_check as app_side

    assert app_side.CLOSEST_SHOWN == engine_side.CLOSEST_SHOWN
    assert app_side.NOT_STATED_HERE == engine_side.NOT_STATED_HERE


def test_a_footnote_number_glued_to_a_quote_is_not_shown() -> None:
    """PDF text glues a footnote's number to the sentence it marks ("12For SGC, ..."); the reader sees the
    sentence, while the quote kept for the highlight is the passage's text as it is."""
    glued = passage("unsupported", "12For SGC, we remove development and test set citations during training.", 1)
    assert glued.shown_quote == "For SGC, we remove development and test set citations during training."
    html = check_html("SPECTER is trained on 10 million PubMed abstracts.", [glued])
    assert "“For SGC, we remove" in html and "12For" not in html
    assert glued.quote.startswith("12For")  # the span located in the PDF is unchanged
