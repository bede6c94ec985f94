"""The golden questions answered end to end: the four bundled demo papers ingested and embedded with
the bundled embedder, each question asked the way `quire ask` asks it, and every citation checked.

With the bundled language model (SmolLM2-135M) the default answer is the evidence digest, so this
runs in minutes on a CPU; written answers with a capable model are benchmarks/answers.py's job.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.cite.markers import cited_numbers
from engine.demo import demo_papers
from engine.request import AskRequest, RequestOptions, Scope
from engine.service import Engine
from engine.types import Answer, AnswerMode

pytestmark = pytest.mark.slow

GOLDEN = json.loads((Path(__file__).with_name("questions.json")).read_text(encoding="utf-8"))
DEMO = {path.name for path in demo_papers()}
LIBRARY_ONLY = Scope(source="library")
NOT_SAVED = RequestOptions(save=False)
ON_DEMO = [q for q in GOLDEN["questions"] if q["source"] == "library" and set(q["expected"]) <= DEMO]


@pytest.fixture(scope="module")
def demo_library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, dict[str, str]]]:
    """The demo papers in a fresh library, embedded; with each file name's document id."""
    with Engine(tmp_path_factory.mktemp("golden") / "home") as engine:
        results = list(engine.add_documents(demo_papers()))
        assert all(r.doc_id and r.passages for r in results), results
        engine.embed_pending()
        yield engine, {Path(r.path).name: r.doc_id for r in results}


def check_citations(engine: Engine, answer: Answer) -> None:
    """Every [n] names a reference of the answer; every quote is verbatim in its stored passage."""
    numbered = {ref.n for ref in answer.references if ref.n}
    assert set(cited_numbers(answer.text)) <= numbered, (answer.text, numbered)
    for sentence in answer.sentences:
        for citation in sentence.citations:
            assert citation.n in numbered
            reference = answer.passage(citation.passage_id)
            assert reference.n == citation.n and citation.quote.strip()
            assert reference.text[citation.quote_start:citation.quote_end] == citation.quote
            assert citation.quote in engine.passage(citation.passage_id).text  # what the viewer opens


def test_the_demo_covers_golden_questions() -> None:
    assert len(ON_DEMO) >= 5, "the golden set should keep several questions about the bundled papers"


@pytest.mark.parametrize("question", ON_DEMO, ids=[q["id"] for q in ON_DEMO])
def test_a_golden_question_is_answered_from_its_paper_with_verbatim_quotes(
        demo_library: tuple[Engine, dict[str, str]], question: dict[str, object]) -> None:
    engine, doc_ids = demo_library
    answer = engine.ask(AskRequest(str(question["question"]), scope=LIBRARY_ONLY, options=NOT_SAVED))
    assert answer.mode != AnswerMode.NO_EVIDENCE and not answer.cancelled
    assert cited_numbers(answer.text), answer.text
    check_citations(engine, answer)
    expected = {doc_ids[name] for name in question["expected"]}  # type: ignore[attr-defined]
    cited = {ref.doc_id for ref in answer.references if ref.n}
    assert expected & cited, f"cites {cited}, none of the expected {expected}"
    recorded = dict(answer.settings)  # enough to make the answer again: every setting and the model file
    assert recorded["retrieval.top_n"] == str(engine.settings.retrieval.top_n) and recorded["mode"] == answer.mode
    assert recorded["model.file"] and len(recorded["model.head_sha256"]) == 64


@pytest.mark.parametrize("question", GOLDEN["off_topic"])
def test_an_off_topic_question_gets_no_invented_citations(demo_library: tuple[Engine, dict[str, str]],
                                                          question: str) -> None:
    engine, _ = demo_library
    answer = engine.ask(AskRequest(question, scope=LIBRARY_ONLY, options=NOT_SAVED))
    check_citations(engine, answer)
    assert answer.mode == AnswerMode.NO_EVIDENCE and not cited_numbers(answer.text), answer.text


@pytest.mark.xfail(strict=True, reason="the answer reader does not yet put SPECTER's training first: read as its "
                                       "own question, \"How is SPECTER trained?\" is best answered by \"We also "
                                       "include both easy and hard distractors as when training SPECTER ...\" "
                                       "(the sentence on its negatives), and the SciBERT sentence is not "
                                       "among the sentences that ask reads "
                                       "(docs/answers.md, A question that asks two things)")
def test_the_demo_question_opens_with_how_specter_is_trained(demo_library: tuple[Engine, dict[str, str]]) -> None:
    """`quire demo`'s own question, asked as the demo asks it: the sentence that states SPECTER's training
    (SciBERT's weights, trained on citation triplets) should come first, not one about representation
    learning in general."""
    from engine.cli.library_commands import DEMO_QUESTION, demo_request

    engine, doc_ids = demo_library
    answer = engine.ask(demo_request())
    assert answer.question == DEMO_QUESTION
    check_citations(engine, answer)
    first = next(s for s in answer.sentences if s.citations)
    assert first.section == 0 and first.citations[0].n == 1
    assert answer.references[0].doc_id == doc_ids["2020.acl-main.207.pdf"]
    opening = first.text.lower()
    # SciBERT's weights trained on citation triplets; "citation" alone also names the model ("Citation-informed").
    assert "scibert" in opening or "triplet" in opening, first.text
