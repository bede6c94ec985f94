"""A model that can write reads the best candidate sentences and says which of them answer the question.

The answer scorer of :mod:`engine.synthesis.evidence` is lexical: it ranks a sentence that is *about*
the question (one that restates its methods, "Here, we investigated ...") above the one that states
the finding. A model able to write can also read. For each of the ``CANDIDATES`` best-scoring
sentences one prompt asks whether a reader could answer the question from that sentence alone; the
probability of "Yes" is read from the first token of the reply (nothing is generated) and moves the
sentence's answer score by ``WEIGHT`` x logit(P(Yes)). The prompts share the system message and the
question, so llama.cpp's prefix cache evaluates little more than each sentence.

Measured with the 1.5B writer on LitQA2 dev (``benchmarks/answer_judge.py``, docs/history/answers.md): the
best-answering sentence states the ideal answer in 11 of 21 odd-numbered questions (10 before) and
14 of 21 even ones (11 before), at about 8 s an answer on a 2-core CPU. The bundled 135M model is not
asked (the service turns judging off for models that small): it cannot read well enough to judge.

When every judged sentence scores under ``NO_ANSWER``, none of them answers (``none_answers``): the
library most likely does not hold the answer, and the pipeline says so instead of writing one.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence

from engine.errors import GenerationError
from engine.progress import CancelToken
from engine.protocols import ChatMessage, LanguageModel, ScoresReplies
from engine.synthesis import prompts
from engine.synthesis.evidence import Evidence, Quote
from engine.tuning import SYNTHESIS

log = logging.getLogger(__name__)

# The measured candidate count, weights and thresholds: engine/tuning.py.
CANDIDATES = SYNTHESIS.judge_candidates
WEIGHT = SYNTHESIS.judge_weight
MARGIN = SYNTHESIS.digest_margin
NO_ANSWER = SYNTHESIS.no_answer
_CLIP = 1e-6  # P(Yes) kept inside (_CLIP, 1 - _CLIP) so the logit stays finite


def can_judge(lm: LanguageModel | None) -> bool:
    return isinstance(lm, ScoresReplies)


def candidates(evidence: Sequence[Evidence], count: int = CANDIDATES) -> list[Quote]:
    """The ``count`` sentences with the best answer scores over all passages (not only their chosen quotes)."""
    pool = [q for item in evidence for q in (item.sentences or item.quotes)]
    return sorted(pool, key=lambda q: -q.answer)[:count]


def messages(question: str, sentence: str) -> list[ChatMessage]:
    return [ChatMessage("system", prompts.prompt("answer_check_system").strip()),
            ChatMessage("user", prompts.prompt("answer_check").format(question=prompts.inert(question),
                                                                      sentence=prompts.inert(sentence)).strip())]


def answers_yes(lm: ScoresReplies, question: str, sentence: str) -> float:
    """P(Yes): a reader could answer ``question`` from ``sentence`` alone."""
    return lm.reply_probabilities(messages(question, sentence), ("Yes", "No"))[0]


def answers_as_well(lm: LanguageModel, question: str, written: str, quote: str, quote_yes: float | None = None,
                    margin: float = MARGIN) -> bool:
    """Whether the model's own first sentence answers the question about as well as the best quote does
    (``quote_yes``: the quote's P(Yes) when judging already asked). A fluent sentence can hold up against
    its sources and still not answer (a copied figure legend, a restated method); the reader is then
    better served by the quote. True when the model cannot judge."""
    if not isinstance(lm, ScoresReplies):
        return True
    try:
        if quote_yes is None:
            quote_yes = answers_yes(lm, question, quote)
        return answers_yes(lm, question, written) + margin >= quote_yes
    except GenerationError as exc:
        log.warning("the model could not judge its own answer (%s); keeping it", exc)
        return True


def judge_candidates(lm: LanguageModel, question: str, evidence: Sequence[Evidence],
                     cancel: CancelToken | None = None, count: int = CANDIDATES) -> dict[tuple[int, int], float]:
    """``{(n, start): P(Yes)}`` for the candidate sentences the model judged; empty when it cannot judge.
    A Stop ends judging early (the sentences judged so far keep their verdict); a model error ends it too,
    and the answer is chosen by the lexical scores alone."""
    if not isinstance(lm, ScoresReplies):
        return {}
    judged: dict[tuple[int, int], float] = {}
    for quote in candidates(evidence, count):
        if cancel is not None and cancel.cancelled:
            break
        try:
            judged[(quote.n, quote.start)] = answers_yes(lm, question, quote.text)
        except GenerationError as exc:  # a prompt too long for the context included
            log.warning("the model could not judge the candidate answers (%s); keeping the lexical ranking", exc)
            break
    return judged


def none_answers(judged: Mapping[tuple[int, int], float], evidence: Sequence[Evidence],
                 threshold: float = NO_ANSWER) -> bool:
    """Whether the model judged every candidate of ``evidence`` (no Stop or model error cut judging short)
    and found none that answers (every P(Yes) under ``threshold``)."""
    return bool(judged) and len(judged) == len(candidates(evidence)) and max(judged.values()) < threshold


def bonuses(judged: Mapping[tuple[int, int], float], weight: float = WEIGHT) -> dict[tuple[int, int], float]:
    """Each judged sentence's answer-score bonus: ``weight`` x logit(P(Yes))."""
    clipped = {key: min(max(yes, _CLIP), 1 - _CLIP) for key, yes in judged.items()}
    return {key: weight * math.log(p / (1 - p)) for key, p in clipped.items()}
