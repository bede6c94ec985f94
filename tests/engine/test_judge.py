"""The shipped support judge on real passages, and verification with it: keep, mark partial, remove, insert.

The judge as Quire runs it: the trained entailment model and the number / negation / direction checks.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from fixtures.models import minilm

from engine.bibliography import Bibliography
from engine.cite.judge import VERDICTS, PairModel, SupportJudge, default_judge, default_judge_folder
from engine.cite.reader import default_reader, default_reader_folder
from engine.cite.support import SupportScorer
from engine.cite.verify import Verifier, VerifyReport, verify_sentence, verify_text
from engine.errors import ModelFileError, ModelNotFoundError
from engine.progress import CancelToken
from engine.types import Reference

SPECTER = ("We propose SPECTER, a new method to generate document-level embedding of scientific documents based on "
           "pretraining a Transformer language model on a powerful signal of document-level relatedness: the "
           "citation graph. Unlike existing pretrained language models, SPECTER can be easily applied to downstream "
           "applications without task-specific fine-tuning. We also introduce SCIDOCS, a new evaluation benchmark "
           "consisting of seven document-level tasks.")
S2ORC = ("We introduce S2ORC, a large corpus of 81.1M English-language academic papers spanning many academic "
         "disciplines. The corpus consists of rich metadata, paper abstracts, resolved bibliographic references, "
         "as well as structured full text for 8.1M open access papers.")
TRUE = "SPECTER can be applied to downstream applications without task-specific fine-tuning."


@cache
def scorer() -> SupportScorer:
    return SupportScorer(minilm())


def judge() -> SupportJudge:
    shipped = scorer().support_judge()
    assert shipped is not None and shipped.similarity_floor is None  # entailment decides, not similarity
    return shipped


def sources() -> dict[int, Reference]:
    return {1: Reference(1, "p1", "d1", "library", Bibliography("SPECTER"), SPECTER, page=1),
            2: Reference(2, "p2", "d2", "library", Bibliography("S2ORC"), S2ORC, page=1)}


def test_a_sentence_of_the_passage_is_supported_with_a_verbatim_quote() -> None:
    result = judge().judge(TRUE, SPECTER)
    assert result.verdict == "supported" and 0.0 < result.score <= 1.0
    assert result.quote == SPECTER[result.start:result.end] and "fine-tuning" in result.quote


@pytest.mark.parametrize("claim", [
    "SPECTER cannot be applied to downstream applications without task-specific fine-tuning.",  # negation
    "S2ORC is a large corpus of 18.1M English-language academic papers spanning many disciplines.",  # number
    "SCIDOCS consists of nine document-level tasks.",  # number word changed: the model's part
    "Quantum dots emit single photons at cryogenic temperatures.",  # another topic
])
def test_changed_or_foreign_claims_are_not_supported(claim: str) -> None:
    verdicts = judge().judge_passages(claim, [SPECTER, S2ORC])
    assert all(v.verdict != "supported" for v in verdicts), verdicts


def test_a_number_change_is_named_in_the_reason() -> None:
    result = judge().judge("S2ORC has structured full text for 9.1M open access papers.", S2ORC)
    assert result.verdict in ("unsupported", "contradicted") and "9.1" in result.reason


def test_an_appended_false_clause_is_not_fully_supported() -> None:
    claim = (f"{TRUE[:-1]}, which shows that it outperforms all prior work on every benchmark by a wide margin.")
    result = judge().judge(claim, SPECTER)
    assert result.verdict in ("partial", "unsupported", "contradicted")


def test_batch_and_single_verdicts_agree() -> None:
    claims = [TRUE, "S2ORC covers 81.1M academic papers.", "SPECTER does not use the citation graph."]
    ranked = scorer().ranked_windows
    batch = default_judge().gated(ranked, 0.67).judge_many([(c, p) for c in claims for p in (SPECTER, S2ORC)])
    single = [default_judge().gated(ranked, 0.67).judge(c, p) for c in claims for p in (SPECTER, S2ORC)]
    assert [b.verdict for b in batch] == [s.verdict for s in single]
    assert all(b.verdict in VERDICTS for b in batch)


def test_a_pairs_probabilities_do_not_depend_on_what_is_judged_beside_it() -> None:
    """The shipped judge quantizes its activations at run time, with one scale for a whole batch: run in
    batches, a pair's probabilities moved with the other pairs and their padding (a verdict in 64 changed)."""
    model = default_judge().model
    assert model.batch_size == 1
    pairs = [(TRUE, SPECTER), ("S2ORC covers 81.1M papers.", S2ORC), ("SPECTER does not use citations.", SPECTER),
             ("The corpus has full text for 8.1M open access papers.", S2ORC + " " + SPECTER)]
    together = model.probabilities(pairs)
    alone = np.stack([model.probabilities([pair])[0] for pair in pairs])
    np.testing.assert_allclose(together, alone, atol=1e-6)


@pytest.mark.parametrize(("folder", "meta"), [(default_judge_folder(), "judge.json"),
                                               (default_reader_folder(), "reader.json")])
def test_each_shipped_graph_says_whether_it_quantizes_its_activations(folder: Path, meta: str) -> None:
    """The settings decide how pairs are batched (the packaged app has no onnx to read the graph with)."""
    import onnx

    said = json.loads((folder / meta).read_text(encoding="utf-8"))["quantized_activations"]
    graph = onnx.load(str(folder / "model.int8.onnx"), load_external_data=False).graph
    assert said == any(node.op_type == "DynamicQuantizeLinear" for node in graph.node)


def test_the_answer_reader_runs_pairs_together_without_changing_their_scores() -> None:
    """Its int8 weights with float activations give each pair the same outputs in any batch, so it batches."""
    model = default_reader().model
    assert model.batch_size > 1
    pairs = [("How is SPECTER trained?", text) for text in (SPECTER, S2ORC, TRUE, SPECTER + " " + S2ORC)]
    np.testing.assert_allclose(model.logits(pairs), np.stack([model.logits([p])[0] for p in pairs]), atol=1e-4)


def test_a_missing_model_folder_says_how_to_get_it_back(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="train_judge"):
        PairModel(tmp_path)


def test_verification_keeps_supported_and_removes_unsupported_citations() -> None:
    report = VerifyReport()
    kept = verify_sentence(f"{TRUE[:-1]} [1].", sources(), Verifier(scorer()), report=report)
    assert [c.n for c in kept.citations] == [1] and kept.support == "supported" and kept.supported
    assert kept.citations[0].verdict == "supported" and kept.citations[0].quote in SPECTER
    wrong = verify_sentence("Quantum dots emit single photons at cryogenic temperatures [1].", sources(),
                            Verifier(scorer()), report=report)
    assert wrong.citations == () and wrong.support == "unsupported" and "[1]" not in wrong.text
    assert report.dropped >= 1


def test_a_negated_claim_loses_its_citation_and_names_the_source_it_clashes_with() -> None:
    sentence = verify_sentence("SPECTER cannot be applied to downstream applications without task-specific "
                               "fine-tuning [1].", sources(), Verifier(scorer()))
    assert sentence.citations == () and sentence.support in ("contradicted", "unsupported")
    if sentence.support == "contradicted":
        assert sentence.contradictions and sentence.contradictions[0].passage_id == "p1"
        assert sentence.contradictions[0].verdict == "contradicted"


def test_uncited_supported_sentences_get_a_citation_inserted() -> None:
    report = VerifyReport()
    first, second = verify_text("S2ORC is a corpus of 81.1M English-language academic papers. "
                                "Quantum dots emit single photons at cryogenic temperatures.",
                                sources(), Verifier(scorer()), report=report)
    assert [c.n for c in first.citations] == [2] and first.citations[0].inserted and first.support == "supported"
    assert second.citations == () and second.support == "unsupported"
    assert report.inserted == 1


def test_headings_need_no_verdict() -> None:
    (heading,) = verify_text("In summary:", sources(), Verifier(scorer()))
    assert heading.supported and heading.support == "supported" and not heading.needs_citation


class _CancelAfter(CancelToken):
    """Cancelled once it has been asked ``checks`` times: a user pressing Stop mid-verification."""

    def __init__(self, checks: int) -> None:
        super().__init__()
        self.left = checks

    @property
    def cancelled(self) -> bool:
        self.left -= 1
        return self.left < 0


def test_cancelling_stops_verification_and_keeps_what_was_checked() -> None:
    text = ("S2ORC is a corpus of 81.1M English-language academic papers [2]. " + TRUE + " [1] "
            "SCIDOCS consists of seven document-level tasks [1].")
    assert len(verify_text(text, sources(), Verifier(scorer()))) == 3
    token = CancelToken()
    token.cancel()
    assert verify_text(text, sources(), Verifier(scorer(), cancel=token)) == []
    partly = verify_text(text, sources(), Verifier(scorer(), cancel=_CancelAfter(3)))  # batches judged, one sentence
    assert len(partly) == 1 and partly[0].citations and partly[0].citations[0].n == 2


def test_a_damaged_model_file_is_named_with_how_to_rebuild_it(tmp_path: Path) -> None:
    for name in ("tokenizer.json", "judge.json"):
        (tmp_path / name).write_bytes((default_judge_folder() / name).read_bytes())
    (tmp_path / "model.int8.onnx").write_bytes(b"\x08\x07not an onnx graph" * 100)
    with pytest.raises(ModelFileError, match="train_judge") as raised:
        PairModel(tmp_path)
    assert raised.value.path == str(tmp_path / "model.int8.onnx")


def test_without_a_loadable_judge_citations_are_kept_as_not_checked(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken install never turns into "supported": the model's citations stay, marked unchecked."""
    monkeypatch.setattr("engine.cite.judge.default_judge_folder", lambda: tmp_path)  # an empty folder
    monkeypatch.setattr("engine.cite.judge._default", None)
    unjudged = SupportScorer(minilm())
    report = VerifyReport()
    cited, invented = verify_text(f"{TRUE[:-1]} [1]. Quantum dots emit single photons at cryogenic temperatures [7].",
                                  sources(), Verifier(unjudged), report=report)
    assert "missing" in unjudged.judge_problem and "train_judge" in unjudged.judge_problem
    assert cited.support == "unchecked" and not cited.supported and [c.n for c in cited.citations] == [1]
    assert cited.citations[0].verdict == "unchecked" and cited.citations[0].quote in SPECTER
    assert invented.citations == () and invented.support == "unchecked" and report.invented == 1
    assert report.unchecked == 2


@pytest.mark.parametrize("evidence", ["SPECTER: Document-level Representation Learning using Citation-informed "
                                      "Transformers", "1 Introduction", "   "])
def test_evidence_that_is_only_a_title_or_empty_supports_nothing(evidence: str) -> None:
    assert judge().judge_passages(TRUE, [evidence], whole=True)[0].verdict != "supported"


def test_a_sentence_its_citation_does_not_support_gets_the_passage_that_does() -> None:
    """Repair, not only removal: S2ORC's sentence cited to SPECTER's passage is moved to S2ORC's."""
    report = VerifyReport()
    sentence = verify_sentence("S2ORC contains structured full text for 8.1M open access papers [1].", sources(),
                               Verifier(scorer()), report=report)
    assert [c.n for c in sentence.citations] == [2] and sentence.citations[0].inserted
    assert sentence.support == "supported" and report.dropped == 1 and report.inserted == 1
