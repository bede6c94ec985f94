"""The model as a judge of which sentence answers the question (engine.synthesis.answer_judge): the
sentence it says answers leads the answer, a sentence outside a passage's chosen quotes can become a
quote, and a Stop or a model error leaves the lexical ranking in charge. Scripted LM, hashing embedder;
the real model's reply probabilities are tested in test_generate.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fixtures.scripted_lm import ScriptedLM

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.embed import HashingEmbedder
from engine.errors import GenerationError
from engine.generate.base import ChatMessage
from engine.progress import CancelToken
from engine.synthesis.answer_judge import NO_ANSWER, bonuses, candidates, judge_candidates, none_answers
from engine.synthesis.digest import NO_ANSWER_HEADING
from engine.synthesis.evidence import Evidence, Quote, extract_evidence, rescored
from engine.synthesis.pipeline import NOT_ANSWERED, AskOptions, ask
from engine.types import Answer, AnswerMode, Reference, SearchHit

TRAINING = ("SPECTER is trained with a triplet margin loss on citation triplets of scientific papers. The training "
            "data consists of 684K triplets built from the citation graph of Semantic Scholar papers. A paper that "
            "cites the query paper is a positive example, and a paper it does not cite is a negative example.")
EVALUATION = ("We evaluate SPECTER embeddings of scientific papers on SCIDOCS, a benchmark of seven document-level "
              "tasks. SPECTER embeddings outperform strong baselines on citation prediction and recommendation.")
QUESTION = "How is SPECTER trained on scientific papers?"
# Not a sentence the lexical scorer puts first for QUESTION (asserted below), so the judge must move it.
ANSWERING = "684K triplets"


class JudgingLM(ScriptedLM):
    """A scripted writer that also judges: P(Yes) from a function of the judged sentence."""

    def __init__(self, writes: str, yes: Callable[[str], float], fail_after: int | None = None,
                 cancel: CancelToken | None = None, cancel_after: int | None = None) -> None:
        super().__init__(lambda _m: writes)
        self.yes = yes
        self.judged: list[str] = []
        self.fail_after = fail_after
        self.cancel_token, self.cancel_after = cancel, cancel_after

    def reply_probabilities(self, messages: Sequence[ChatMessage], replies: Sequence[str]) -> list[float]:
        if "Sentence:" not in messages[-1].content:  # verification's second reading: it reads no support
            return [0.0] * (len(replies) - 1) + [1.0]
        if self.fail_after is not None and len(self.judged) >= self.fail_after:
            raise GenerationError("llama.cpp failed while reading the prompt")
        sentence = messages[-1].content.split("Sentence:", 1)[1]
        self.judged.append(sentence)
        if self.cancel_token is not None and len(self.judged) >= (self.cancel_after or 0):
            self.cancel_token.cancel()
        p = self.yes(sentence)
        return [p, 1 - p]


def retriever(*texts: str):  # type: ignore[no-untyped-def]
    found = [SearchHit(f"doc{i}-0001", f"doc{i}", "library", Bibliography("SPECTER"), t, score=1.0 / (i + 1), page=1)
             for i, t in enumerate(texts)]
    return lambda _query, k: found[:k]


def opts(**overrides: object) -> AskOptions:
    return AskOptions(**{"relevance_threshold": 0.2, **overrides})  # type: ignore[arg-type]


def lead_quote(answer: Answer) -> str:
    """The quote that stands for the answer: the first quoted sentence of section 0."""
    return next(s for s in answer.sentences if s.section == 0 and s.text.startswith("“")).citations[0].quote


# A draft that fails verification in auto mode: the answer is the digest, led by the best-answering quote.
UNSUPPORTED = "Astronauts trained it on the moon [1]."


def test_the_sentence_the_model_judges_to_answer_leads_the_answer() -> None:
    plain = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                language_model=lambda: ScriptedLM(lambda _m: UNSUPPORTED), options=opts())
    assert ANSWERING not in lead_quote(plain)  # the lexical ranking alone puts another sentence first
    lm = JudgingLM(UNSUPPORTED, lambda s: 0.95 if ANSWERING in s else 0.05)
    stages: list[str] = []
    judged = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                 language_model=lambda: lm, options=opts(), on_stage=stages.append)
    assert judged.mode == AnswerMode.DIGEST and ANSWERING in lead_quote(judged)
    assert "judging" in stages and "judging" in dict(judged.timings)
    assert 1 < len(lm.judged) <= 8
    assert all(c.quote in judged.passage(c.passage_id).text for s in judged.sentences for c in s.citations)


def test_the_written_answer_shows_the_judged_quote_after_its_first_sentence() -> None:
    lm = JudgingLM("SPECTER is trained with a triplet margin loss on citation triplets [1]. SPECTER embeddings "
                   "outperform strong baselines on citation prediction [2].",
                   lambda s: 0.95 if ANSWERING in s else 0.05)
    answer = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                 language_model=lambda: lm, options=opts(mode="write"))
    assert answer.mode == AnswerMode.WRITTEN and answer.text.startswith("SPECTER is trained with a triplet")
    first, quote, second = [s for s in answer.sentences if s.section == 0][:3]
    assert first.text.startswith("SPECTER is trained") and second.text.startswith("SPECTER embeddings")
    assert ANSWERING in quote.text and quote.text.startswith("“")


def test_judging_can_be_turned_off() -> None:
    lm = JudgingLM(UNSUPPORTED, lambda s: 0.95 if ANSWERING in s else 0.05)
    answer = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                 language_model=lambda: lm, options=opts(judge_answers=False))
    assert not lm.judged and ANSWERING not in lead_quote(answer)


def test_a_model_error_while_judging_keeps_the_lexical_ranking() -> None:
    plain = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                language_model=lambda: ScriptedLM(lambda _m: UNSUPPORTED), options=opts())
    lm = JudgingLM(UNSUPPORTED, lambda s: 0.95 if ANSWERING in s else 0.05, fail_after=0)
    answer = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                 language_model=lambda: lm, options=opts())
    assert lead_quote(answer) == lead_quote(plain)


def test_stop_while_judging_ends_judging_and_the_answer_is_marked_cancelled() -> None:
    cancel = CancelToken()
    lm = JudgingLM("SPECTER is trained with a triplet margin loss [1].", lambda _s: 0.5, cancel=cancel,
                   cancel_after=2)
    answer = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                 language_model=lambda: lm, options=opts(mode="write"), cancel=cancel)
    assert len(lm.judged) == 2 and answer.cancelled


def test_when_the_model_judges_that_no_sentence_answers_the_answer_says_so_and_writes_nothing() -> None:
    written = "SPECTER is trained with a triplet margin loss on citation triplets [1]."
    lm = JudgingLM(written, lambda _s: NO_ANSWER - 0.2)
    answer = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                 language_model=lambda: lm, options=opts())
    assert not lm.calls  # nothing was written
    assert answer.mode == AnswerMode.DIGEST and answer.text.startswith(NOT_ANSWERED)
    first = answer.sentences[0]
    assert first.section == 0 and not first.needs_citation and not first.citations
    assert "judged that none answers" in answer.notice
    # The closest evidence is still shown, quoted verbatim and cited.
    quoted = [s for s in answer.sentences if s.citations]
    assert quoted and all(c.quote in answer.passage(c.passage_id).text for s in quoted for c in s.citations)
    # Its quote is the closest passage, not an answer, and its heading says so.
    assert answer.sections[0] == NO_ANSWER_HEADING and max(s.section for s in answer.sentences) < len(answer.sections)


def test_one_sentence_judged_to_answer_is_enough_and_the_answer_is_written() -> None:
    written = "SPECTER is trained with a triplet margin loss on citation triplets [1]."
    lm = JudgingLM(written, lambda s: NO_ANSWER + 0.3 if "triplet margin" in s else 0.05)
    answer = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                 language_model=lambda: lm, options=opts())
    assert lm.calls and answer.mode == AnswerMode.WRITTEN and NOT_ANSWERED not in answer.text


def test_a_model_error_or_write_mode_never_says_nothing_answers() -> None:
    written = "SPECTER is trained with a triplet margin loss on citation triplets [1]."
    # Judging ended by an error after two low verdicts: too little read to say nothing answers.
    failing = JudgingLM(written, lambda _s: 0.01, fail_after=2)
    answer = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                 language_model=lambda: failing, options=opts())
    assert len(failing.judged) == 2 and NOT_ANSWERED not in answer.text
    # "write": the user asked for prose, so the model writes (and verification checks it as always).
    forced = JudgingLM(written, lambda _s: 0.01)
    answer = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                 language_model=lambda: forced, options=opts(mode="write"))
    assert forced.calls and answer.mode == AnswerMode.WRITTEN and NOT_ANSWERED not in answer.text


# --- the parts ------------------------------------------------------------------------------------


def evidence(texts: Sequence[str], quotes_per_passage: int = 1) -> list[Evidence]:
    refs = [Reference(n=i + 1, passage_id=f"p{i}", doc_id=f"d{i}", source="library", bib=Bibliography("SPECTER"),
                      text=t)
            for i, t in enumerate(texts)]
    return extract_evidence(QUESTION, refs, SupportScorer(HashingEmbedder()), quotes_per_passage)


def test_a_sentence_that_was_not_a_quote_becomes_one_when_judged_to_answer() -> None:
    found = evidence([TRAINING])
    (item,) = found
    assert len(item.sentences) == 3 and len(item.quotes) == 1
    outsider = next(q for q in item.sentences if q not in item.quotes)
    (after,) = rescored(found, {(outsider.n, outsider.start): 1.0}, quotes_per_passage=1)
    assert after.quotes[0].start == outsider.start and after.best is not None and after.best.text == outsider.text
    assert rescored(found, {}) == found  # nothing judged, nothing changes


def test_candidates_are_the_best_sentences_over_all_passages() -> None:
    found = evidence([TRAINING, EVALUATION])
    pool = candidates(found, 3)
    assert len(pool) == 3 and [q.answer for q in pool] == sorted((q.answer for q in pool), reverse=True)
    everything = sorted((q.answer for e in found for q in e.sentences), reverse=True)
    assert [q.answer for q in pool] == everything[:3]


def test_the_bonus_follows_the_models_confidence_and_a_plain_model_gives_none() -> None:
    found = evidence([TRAINING])
    lm = JudgingLM("", lambda s: 0.9 if ANSWERING in s else 0.1)
    bonus = bonuses(judge_candidates(lm, QUESTION, found, count=3))
    by_text = {q.text: bonus[(q.n, q.start)] for q in found[0].sentences}
    answering = next(v for t, v in by_text.items() if ANSWERING in t)
    assert answering > 0 and all(v < 0 for t, v in by_text.items() if ANSWERING not in t)
    assert judge_candidates(ScriptedLM(lambda _m: ""), QUESTION, found) == {}
    certain = bonuses(judge_candidates(JudgingLM("", lambda _s: 1.0), QUESTION, found, count=1))
    assert all(v < 10 for v in certain.values())  # P(Yes) = 1 stays finite


def test_quote_dataclass_is_unchanged_by_rescoring_other_passages() -> None:
    found = evidence([TRAINING, EVALUATION])
    first = found[0].sentences[0]
    after = rescored(found, {(first.n, first.start): 0.5})
    assert after[1] == found[1]
    assert isinstance(after[0].sentences[0], Quote) and after[0].sentences[0].answer == first.answer + 0.5


def test_a_written_answer_judged_to_answer_less_well_than_the_best_quote_gives_way_to_the_digest() -> None:
    written = "SPECTER is trained with a triplet margin loss on citation triplets [1]."
    # The model finds its own sentence a poor answer next to the quote with the number: the digest answers.
    doubtful = JudgingLM(written, lambda s: 0.9 if ANSWERING in s else 0.2)
    answer = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                 language_model=lambda: doubtful, options=opts())
    assert answer.mode == AnswerMode.DIGEST and "as well as the best quote" in answer.notice
    assert ANSWERING in lead_quote(answer)
    # The quote was judged already: the self-check asks about the written sentence only.
    assert sum(ANSWERING in s for s in doubtful.judged) == 1 and "triplet margin loss" in doubtful.judged[-1]
    # Judged about as good (within the margin): the written answer stands, and "write" never asks.
    confident = JudgingLM(written, lambda s: 0.9 if ANSWERING in s or "triplet margin" in s else 0.2)
    assert ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
               language_model=lambda: confident, options=opts()).mode == AnswerMode.WRITTEN
    forced = ask(QUESTION, retrieve=retriever(TRAINING, EVALUATION), scorer=SupportScorer(HashingEmbedder()),
                 language_model=lambda: JudgingLM(written, lambda s: 0.9 if ANSWERING in s else 0.2),
                 options=opts(mode="write"))
    assert forced.mode == AnswerMode.WRITTEN


def test_none_answers_needs_every_candidate_judged_and_every_verdict_under_the_threshold() -> None:
    found = evidence([TRAINING, EVALUATION])
    keys = [(q.n, q.start) for q in candidates(found)]
    assert len(keys) > 2
    assert not none_answers({}, found)
    assert none_answers({key: NO_ANSWER - 0.01 for key in keys}, found)
    assert not none_answers({**{key: 0.1 for key in keys}, keys[-1]: NO_ANSWER + 0.01}, found)
    assert not none_answers({key: 0.1 for key in keys[:2]}, found)  # judging cut short
