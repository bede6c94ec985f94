"""Each step of answering alone (engine.synthesis.steps), with the hashing embedder and scripted models:
what ask() composes must hold step by step, so a change to one step is caught where it is made."""

from __future__ import annotations

from fixtures.scripted_lm import ScriptedLM
from test_answer_judge import EVALUATION, TRAINING, JudgingLM
from test_synthesis_pipeline import GRAPH, QUESTION, S2ORC, SPECTER, good_writer, hits, opts, retriever, scorer

from engine.bibliography import Bibliography
from engine.cite.verify import Verifier, VerifyReport
from engine.synthesis.evidence import direct_answers
from engine.synthesis.steps import (
    PassageTools,
    Reading,
    choose_evidence,
    fallback_reason,
    read_candidates,
    retrieve_passages,
    verify_draft,
    write_draft,
    written_notice,
)
from engine.synthesis.write import WriteOutcome, Written
from engine.types import AnswerSentence, SearchHit

COOKING = "Bake the bread at 200 degrees for forty minutes until the crust is brown and the loaf sounds hollow."


def test_retrieving_asks_for_three_times_the_passages_and_caps_each_paper() -> None:
    asked: list[int] = []
    same_paper = [SearchHit(f"one-{i}", "one", "library", Bibliography("One paper"), SPECTER,
                            score=1.0 - i / 10) for i in range(6)]

    def retrieve(_query: str, k: int) -> list[SearchHit]:
        asked.append(k)
        return [*same_paper, *hits(S2ORC, GRAPH)][:k]

    chosen = retrieve_passages(QUESTION, retrieve, opts(top_n=4, per_paper=2))
    assert asked == [12]  # with a cap, three times top_n are searched
    assert [h.doc_id for h in chosen].count("one") == 2 and len(chosen) == 4
    asked.clear()
    assert len(retrieve_passages(QUESTION, retrieve, opts(top_n=4, per_paper=0))) == 4 and asked == [4]


def test_choosing_numbers_every_hit_and_keeps_only_what_addresses_the_question() -> None:
    found = hits(SPECTER, COOKING, S2ORC)
    chosen = choose_evidence(QUESTION, found, scorer(), opts())
    assert [r.n for r in chosen.references] == [1, 2, 3]
    assert len(chosen.found) == 3
    kept = {e.reference.passage_id for e in chosen.evidence}
    assert "p1" not in kept and kept <= {"p0", "p2"} and kept


def test_reading_the_candidates_moves_the_sentence_the_model_says_answers() -> None:
    chosen = choose_evidence("How is SPECTER trained on scientific papers?", hits(TRAINING, EVALUATION), scorer(),
                             opts(relevance_threshold=0.0))
    model = JudgingLM("unused", lambda sentence: 0.95 if "684K triplets" in sentence else 0.05)
    reading = read_candidates(model, "How is SPECTER trained on scientific papers?", chosen.evidence, opts())
    assert model.judged and not reading.unanswered
    best = next(iter(direct_answers(reading.evidence)), None)
    assert best is not None and "684K triplets" in best.text

    nothing = JudgingLM("unused", lambda _sentence: 0.01)
    assert read_candidates(nothing, "How is SPECTER trained on scientific papers?", chosen.evidence,
                           opts()).unanswered


def test_writing_with_feedback_numbers_the_passages_it_finds_after_the_others() -> None:
    search = retriever(SPECTER, S2ORC, GRAPH)
    chosen = choose_evidence(QUESTION, search(QUESTION, 1), scorer(), opts())
    outcome = write_draft(QUESTION, ScriptedLM(good_writer), chosen, chosen.evidence, PassageTools(search, scorer()),
                          opts(feedback=True))
    assert outcome.written.direct and outcome.feedback
    assert [r.n for r in chosen.references][:1] == [1] and len(chosen.references) > 1  # feedback found more
    assert all(e.reference.n > 1 for e in outcome.extra)


def test_verifying_drops_a_number_that_names_no_given_passage() -> None:
    chosen = choose_evidence(QUESTION, hits(SPECTER, S2ORC), scorer(), opts())
    given = {e.reference.n: e.reference for e in chosen.evidence}
    outcome = WriteOutcome(Written("SPECTER can be applied to downstream applications without task-specific "
                                   "fine-tuning [1] [17].", (("Corpus", "S2ORC provides structured full text for "
                                                               "8.1M open access papers [2]."),)))
    sentences, headings, report = verify_draft(outcome, given, Verifier(scorer(), lambda *_: ()))
    assert headings[1:] == ("Corpus",) and [s.section for s in sentences] == [0, 1]
    assert report.invented == 1 and all(c.n in given for s in sentences for c in s.citations)


def test_the_draft_falls_back_only_in_auto_mode_and_says_why() -> None:
    lm = ScriptedLM(["unused"])
    reading = Reading([], {}, unanswered=False)
    unsupported = [AnswerSentence("SPECTER was made on Mars.", needs_citation=True, supported=False, section=0)]
    reason = fallback_reason(unsupported, QUESTION, None, reading, lm, scorer(), opts(mode="auto"))
    assert "did not hold up" in reason and "0 of 1" in reason and "direct answer not" in reason
    assert fallback_reason(unsupported, QUESTION, None, reading, lm, scorer(), opts(mode="write")) == ""


def test_a_written_answer_says_what_verification_changed() -> None:
    report = VerifyReport(invented=1, dropped=1, unsupported=["A sentence."])
    notice = written_notice("Your question was cut.", WriteOutcome(Written("", ()), trimmed="2 passages left out"),
                            report, scorer())
    assert notice == ("Your question was cut. Note: 2 passages left out. Verification removed 2 citations the "
                      "sources do not back. 1 sentence could not be matched to a source and is marked.")
