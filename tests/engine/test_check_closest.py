"""Check a Claim with nothing for or against: the closest passages are those nearest the claim, each shown with
its sentence nearest the claim, not the window the judge found least unlikely to support it. The shipped judge
and the bundled embedder read every pair here."""

from __future__ import annotations

from collections.abc import Sequence

from fixtures.models import minilm

from engine.bibliography import Bibliography
from engine.cite.claims import Nearness, SearchFn, check_claim, nearness_by, words_not_found
from engine.cite.judge import NOT_STATED, default_judge
from engine.cite.support import SupportScorer
from engine.progress import CancelToken, ProgressCallback
from engine.types import SearchHit

SPECTER = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"
CLAIM = "SPECTER is trained on 10 million PubMed abstracts."
HYPERPARAMETERS = ("We used the following hyperparameter grid for the baseline: {'window': [5, 10, 15], 'sample': "
                   "[0, 10 ** -6, 10 ** -5], 'epochs': [50, 100, 200]}, for a total of 27 models.")
TRAINING_DATA = ("For SPECTER, we also perform an online A/B test. To train our model, we use a subset of the "
                 "Semantic Scholar corpus consisting of about 146K query papers (around 26.7M tokens) with their "
                 "corresponding outgoing citations. We use an additional 32K papers for validation.")
SUMMARIES = ("The annotators rated summaries of news articles for faithfulness. Each summary was read by three "
             "annotators, who marked every unit that the article does not support.")


def searching(*found: tuple[str, str]) -> SearchFn:
    def search(claim: str, k: int, progress: ProgressCallback, cancel: CancelToken | None) -> Sequence[SearchHit]:
        return [SearchHit(f"p{i}", f"d{i}", "library", Bibliography(title), text, score=1.0, page=1)
                for i, (title, text) in enumerate(found)]
    return search


def nearness() -> Nearness:
    return nearness_by(SupportScorer(minilm(), judge=None, reader=None))


FOUND = searching(("LONGEVAL: Guidelines for Human Evaluation", SUMMARIES), (SPECTER, HYPERPARAMETERS),
                  (SPECTER, TRAINING_DATA))


def test_without_a_measure_the_passages_keep_searchs_order_and_the_judges_quote() -> None:
    check = check_claim(CLAIM, FOUND, default_judge())
    assert [p.passage_id for p in check.closest()] == ["p0", "p1", "p2"]
    assert "window" in check.passages[1].quote  # the hyperparameter grid: what the judge read, not what it says


def test_the_passage_nearest_the_claim_comes_first_with_its_nearest_sentence() -> None:
    check = check_claim(CLAIM, FOUND, default_judge(), nearness=nearness())
    first = check.closest()[0]
    # "our model" is SPECTER here: the paper's title names it, so its words count in every sentence of the paper.
    assert first.passage_id == "p2" and first.quote.startswith("To train our model, we use a subset"), first.quote
    assert first.verdict == "unsupported" and first.closeness > 0
    assert TRAINING_DATA[first.quote_start:first.quote_end] == first.quote  # a verbatim span, highlightable
    # The reason is the checks' reading of the sentence shown: it does not give the claim's number.
    assert "10" in first.reason and first.reason != NOT_STATED
    assert [p.passage_id for p in check.closest()][-1] == "p0"  # the passage on another subject comes last


def test_a_passage_that_supports_the_claim_is_not_touched() -> None:
    claim = "SPECTER is trained on a subset of the Semantic Scholar corpus with about 146K query papers."
    check = check_claim(claim, FOUND, default_judge(), nearness=nearness())
    assert check.closest() == []
    supporting = check.supporting[0]
    assert supporting.passage_id == "p2" and supporting.closeness == 0.0


def test_thanks_and_who_did_what_are_not_shown_as_what_a_paper_says() -> None:
    ending = ("Developers should be vigilant when integrating papermage output into any downstream application.\n"
              "Acknowledgements\nWe thank our teammates at Semantic Scholar for their help on this project. In "
              "particular: Rodney Kinney provided insight during discussions about how best to represent data "
              "extracted from documents; Paul Sayre provided feedback on initial designs of the library.\n"
              "Author Contributions\nJoseph Chee Chang implemented an end-to-end web-based visual interface for "
              "papermage and helped iterate on papermage's designs.")
    found = searching(("PaperMage: A Unified Toolkit for Processing Scientific Documents", ending))
    shown = check_claim("PaperMage is a Java library.", found, default_judge(), nearness=nearness()).closest()
    assert [p.quote[:20] for p in shown] == ["Developers should be"]


def test_a_claims_word_no_passage_found_uses_is_named() -> None:
    found = searching((SPECTER, HYPERPARAMETERS), (SPECTER, TRAINING_DATA))
    check = check_claim("Rotavirus codes for six non-structural proteins.", found, default_judge(),
                        nearness=nearness())
    assert check.closest() and any("Rotavirus" in note and "may not cover" in note for note in check.notes)
    assert words_not_found("S2ORC contains 81.1M papers.", ["The S2ORC corpus holds papers."]) == []  # a verb
    assert words_not_found("S2ORC parses PDFs with Adobe Acrobat.", ["S2ORC parses PDFs with GROBID."]) == \
        ["Adobe", "Acrobat"]


def test_no_word_note_when_a_passage_supports_the_claim() -> None:
    claim = "SPECTER is trained on a subset of the Semantic Scholar corpus with about 146K query papers in Zurich."
    check = check_claim(claim, FOUND, default_judge(), nearness=nearness())
    assert check.supporting or check.contradicting or check.closest()
    assert not check.supporting or not any("Zurich" in note for note in check.notes)
