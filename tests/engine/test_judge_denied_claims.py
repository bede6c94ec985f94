"""Claims a passage denies or never makes, met in use, and a paraphrase it does make: the shipped judge, as
Quire runs it (windows, checks, thresholds), on the passages the user was shown."""

from __future__ import annotations

import pytest

from engine.bibliography import Bibliography
from engine.cite.claims import UNNAMED, check_claim
from engine.cite.judge import default_judge
from engine.types import SearchHit

# MapReduce (Dean and Ghemawat), section 3.3, as the library holds it.
MAPREDUCE = (
    "Completed map tasks are re-executed on a failure because their output is stored on the local disk(s) of the "
    "failed machine and is therefore inaccessible. Completed reduce tasks do not need to be re-executed since "
    "their output is stored in a global file system. When a map task is executed first by worker A and then later "
    "executed by worker B (because A failed), all workers executing reduce tasks are notified of the "
    "re-execution. Any reduce task that has not already read the data from worker A will read the data from "
    "worker B.")
# The sample datastore's "Cross-Entropy Loss Leads To Poor Margins": on the loss, never on SPECTER.
CROSS_ENTROPY = (
    "Neural networks could misclassify inputs that are slightly different from their training data, which "
    "indicates a small margin between their decision boundaries and the training dataset. In this work, we study "
    "the binary classification of linearly separable datasets and show that linear classifiers could also have "
    "decision boundaries that lie close to their training dataset if cross-entropy loss is used for training. In "
    "particular, we show that if the features of the training dataset lie in a low-dimensional affine subspace "
    "and the cross-entropy loss is minimized by using a gradient method, the margin between the training points "
    "and the decision boundary could be much smaller than the optimal value.")
# The sample datastore's "Graph Attention Networks", its abstract.
GRAPH_ATTENTION = (
    "We present graph attention networks (GATs), novel neural network architectures that operate on "
    "graph-structured data, leveraging masked self-attentional layers to address the shortcomings of prior "
    "methods based on graph convolutions or their approximations. By stacking layers in which nodes are able to "
    "attend over their neighborhoods' features, we enable (implicitly) specifying different weights to different "
    "nodes in a neighborhood, without requiring any kind of costly matrix operation (such as inversion) or "
    "depending on knowing the graph structure upfront.")


@pytest.fixture(scope="module")
def judge():  # type: ignore[no-untyped-def]
    return default_judge()


def test_a_claim_the_passage_negates_is_not_supported(judge) -> None:  # type: ignore[no-untyped-def]
    """The model reads 'do not need to be re-executed' as support (P 0.76); the negation check, said of just
    the claim's subject ("completed reduce tasks"), refuses it."""
    verdict = judge.judge("MapReduce re-executes completed reduce tasks when a worker fails.", MAPREDUCE)
    assert verdict.verdict in ("contradicted", "unsupported"), verdict


def test_a_found_passage_that_never_names_the_claims_subject_is_no_support(judge) -> None:  # type: ignore[no-untyped-def]
    """`quire check` searches for the claim: the datastore paper on the loss came first, supported at P 0.99."""
    loss_title = Bibliography("Cross-Entropy Loss Leads To Poor Margins")
    found = [SearchHit("p1", "scitldr:ByfbnsA9Km", "cs-sample", loss_title, CROSS_ENTROPY),
             SearchHit("p2", "gat", "cs-sample", Bibliography("Graph Attention Networks"), GRAPH_ATTENTION)]
    result = check_claim("SPECTER is trained with a cross-entropy classification loss.",
                         lambda *_: found, judge)
    assert not result.supporting, result.supporting
    loss_paper = next(p for p in result.passages if p.doc_id == "scitldr:ByfbnsA9Km")
    assert loss_paper.reason == f"{UNNAMED} SPECTER"
    # A name the paper's title gives counts: the passage itself need not repeat it.
    titled = [SearchHit("p3", "specter", "library", Bibliography("SPECTER: Document-level Representation Learning"),
                        "We train the model with a triplet margin loss over citing and cited papers.")]
    kept = check_claim("SPECTER is trained with a triplet margin loss.", lambda *_: titled, judge)
    assert [p.reason for p in kept.passages if p.reason.startswith(UNNAMED)] == []


def test_one_wrong_content_word_is_not_supported(judge) -> None:  # type: ignore[no-untyped-def]
    wrong = judge.judge("Graph attention networks assign different weights to different nodes in a neighborhood "
                        "without costly matrix operations or deprecation.", GRAPH_ATTENTION)
    assert wrong.verdict != "supported", wrong


@pytest.mark.xfail(strict=True, reason="the window the judge reads ('By stacking layers ... we enable specifying "
                   "different weights ...') lacks the subject, which the sentence before it names")
def test_a_faithful_paraphrase_is_supported(judge) -> None:  # type: ignore[no-untyped-def]
    faithful = judge.judge("Graph attention networks assign different weights to different nodes in a neighborhood "
                           "without costly matrix operations such as inversion.", GRAPH_ATTENTION)
    assert faithful.verdict == "supported", faithful
