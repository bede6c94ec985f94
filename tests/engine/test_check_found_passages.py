"""Check a Claim by search: a passage found on the claim's subject is not marked contradicted for saying
something else about it; a passage that says otherwise on the claim's own words, or that a check finds
clashing, still is. The shipped judge reads every pair here."""

from __future__ import annotations

from collections.abc import Sequence

from engine.bibliography import Bibliography
from engine.cite.claims import SearchFn, check_claim
from engine.cite.judge import default_judge
from engine.progress import CancelToken, ProgressCallback
from engine.types import SearchHit

# A found passage supports a claim naming MapReduce only where it or its paper's title names it.
MAPREDUCE = Bibliography("MapReduce: Simplified Data Processing on Large Clusters")


def searching(*texts: str) -> SearchFn:
    def search(claim: str, k: int, progress: ProgressCallback, cancel: CancelToken | None) -> Sequence[SearchHit]:
        return [SearchHit(f"p{i}", "d1", "library", MAPREDUCE, text, score=1.0, page=1)
                for i, text in enumerate(texts)]
    return search


def verdicts(claim: str, *texts: str) -> dict[str, str]:
    check = check_claim(claim, searching(*texts), default_judge())
    return {p.passage_id: p.verdict for p in check.passages}


def test_a_passage_on_the_subject_is_not_marked_contradicted_for_saying_something_else() -> None:
    other = "The front-end of CiteSee was built on the open-source ScholarPhi codebase."
    judged = default_judge().judge("CiteSee is a mobile app.", other)
    assert judged.verdict == "contradicted"  # the model's reading of "same subject, another statement"
    assert verdicts("CiteSee is a mobile app.", other) == {"p0": "unsupported"}


def test_a_passage_that_says_otherwise_in_the_claims_words_is_still_marked() -> None:
    found = verdicts("MapReduce was developed at Microsoft.",
                     "MapReduce was developed at Google to process large amounts of raw data.")
    assert found == {"p0": "contradicted"}


def test_a_clash_a_check_finds_is_still_marked() -> None:
    found = verdicts("SPECTER does not use citations.",
                     "SPECTER uses pretrained language models in combination with graph-based citation signals.")
    assert found == {"p0": "contradicted"}


SUPPORTING = ("Completed map tasks are re-executed on a failure because their output is stored on the local disk(s) "
              "of the failed machine and is therefore inaccessible. Any map task or reduce task in progress on a "
              "failed worker is also reset to idle and becomes eligible for rescheduling.")
BACKUP = ("When a MapReduce operation is close to completion, the master schedules backup executions of the remaining "
          "in-progress tasks.")
CLAIM = "MapReduce re-executes the tasks of a failed worker."


def test_a_paper_that_supports_the_claim_does_not_also_contradict_it_by_the_models_reading_alone() -> None:
    judged = default_judge().judge(CLAIM, BACKUP)
    assert judged.verdict == "contradicted"  # "same subject, another statement", on the claim's words
    assert verdicts(CLAIM, SUPPORTING, BACKUP) == {"p0": "supported", "p1": "unsupported"}


def test_another_papers_contradiction_still_stands() -> None:
    def search(claim: str, k: int, progress: ProgressCallback, cancel: CancelToken | None) -> Sequence[SearchHit]:
        return [SearchHit(f"p{i}", f"d{i}", "library", MAPREDUCE, text, score=1.0, page=1)
                for i, text in enumerate((SUPPORTING, BACKUP))]
    check = check_claim(CLAIM, search, default_judge())
    assert {p.passage_id: p.verdict for p in check.passages} == {"p0": "supported", "p1": "contradicted"}
