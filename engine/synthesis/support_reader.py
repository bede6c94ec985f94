"""The writer as a second reader of its own sentences (Self-RAG's ISSUP: fully / partially / not supported).

The cross-encoder judge (:mod:`engine.cite.judge`) is a six-layer model trained on Wikipedia-style
claims; it reads a loosely worded scientific sentence ("vitamin D lowers the risk of severe disease")
against the passage that says it in other words ("deficiency was associated with ...") and often finds
no support. A model able to write also reads better: on HealthVer pairs it orders supported claims above
refuted ones with ROC AUC 0.83 against the cross-encoder's 0.56 (``benchmarks/lm_judge.py``,
docs/history/verification.md). It is also 2 s a pair on a 2-core CPU, so it reads only what the cross-encoder
did not support, and never what a deterministic check vetoed (a changed number, a dropped "not"): those
verdicts stand. Where reading is cheap (:func:`reads_every_sentence`: the model runs on a GPU, where a read
costs ~10 ms, or its reads have been measured under ``CHEAP_READ_SECONDS``), it reads every written
sentence against its cited passage, and where it reads the passage as not saying the sentence (a score
under ``VETO_BELOW``) its verdict is the one shown.

One prompt per (sentence, passage): three worked examples, the passage and the claim, then "Reply Fully,
Partially or No"; the reply is read from the first token's probabilities (nothing is generated), and
the support score is P(Fully) + ½ P(Partially). The examples and the system message open every prompt,
so llama.cpp's prefix cache evaluates little more than the passage and the claim.
"""

from __future__ import annotations

import logging
import threading
import time

from engine.errors import GenerationError
from engine.protocols import ChatMessage, ScoresReplies
from engine.synthesis import prompts
from engine.tuning import CITATION

log = logging.getLogger(__name__)

REPLIES = ("Fully", "Partially", "No")
# Fitted by ``benchmarks/lm_judge.py`` on training-side pairs (engine/tuning.py has how). The 1.5B writer
# seldom answers "Fully", so its scores are low; what matters is that they rank (AUC 0.81 there).
SUPPORTED = CITATION.reader_supported
MAX_PASSAGE_CHARS = 1500  # a ~250-word passage whole; longer ones are cut (the prompt must fit 2k tokens)
# A read this fast makes reading every sentence of an answer cost under a second (a 10-sentence answer,
# one cited passage each); a 2-core CPU takes ~2 s a read, an H100 ~10 ms (docs/history/verification.md).
CHEAP_READ_SECONDS = 0.05
# Below this score the reader's "no" overrules the judge's support (when it reads every sentence). Fitted on
# the training-side pairs of benchmarks/lm_judge.py (fit_scores in benchmarks/results/lm_judge.json): the
# highest bar at which 90 % of the pairs it vetoes are labelled not supported while it vetoes at most one
# supported pair in twenty (0.10: 16 of 17, 1 of 31 supported). The writer seldom answers "Fully", so a
# true sentence may score only 0.1–0.2: the acceptance threshold (SUPPORTED) is no veto bar.
VETO_BELOW = 0.10


def reads_every_sentence(offloaded: bool, seconds_per_read: float | None) -> bool:
    """Whether the writer reads every written sentence against its cited passage (not only those the
    judge leaves unsupported): when the model runs on a GPU, or a read has been measured to be cheap.
    On a CPU, where a read costs seconds, only the doubtful sentences are read."""
    return offloaded or (seconds_per_read is not None and seconds_per_read < CHEAP_READ_SECONDS)


def measured_read_seconds(lm: object) -> float | None:
    """The fastest read of this loaded model so far (None before its first read, or for a model that does
    not keep the measurement: only a real llama.cpp model's time says what a read costs)."""
    seconds = getattr(lm, "fastest_read_seconds", None)
    return float(seconds) if seconds is not None else None


def messages(claim: str, passage: str) -> list[ChatMessage]:
    """The few-shot support question for one (claim, passage) pair."""
    user = prompts.prompt("support_check").format(examples=prompts.prompt("support_check_examples"),
                                                  passage=prompts.inert(passage)[:MAX_PASSAGE_CHARS],
                                                  claim=prompts.inert(claim))
    return [ChatMessage("system", prompts.prompt("support_check_system").strip()),
            ChatMessage("user", user.strip())]


def support_score(lm: ScoresReplies, claim: str, passage: str) -> float:
    """P(Fully) + ½ P(Partially): how much the model reads the passage as supporting the claim."""
    fully, partially, _ = lm.reply_probabilities(messages(claim, passage), REPLIES)
    return fully + 0.5 * partially


class SupportReader:
    """Reads (claim, passage) pairs with a capable model; a verdict only at or above ``threshold``.

    Called as ``reader(claim, passage)``: the support score when the model reads the passage as supporting
    the claim, None when it does not or cannot (a model error is logged and counts as "not supported",
    so a failing reader never adds a citation)."""

    def __init__(self, lm: ScoresReplies, threshold: float = SUPPORTED) -> None:
        self.lm = lm
        self.threshold = threshold
        self.reads = 0  # model calls made, for the answer's step costs and the benchmarks
        self._scores: dict[tuple[str, str], float | None] = {}
        self._lock = threading.Lock()  # the model runs one prompt at a time

    def score(self, claim: str, passage: str) -> float | None:
        """The support score (None when the model could not read the pair)."""
        key = (claim, passage)
        with self._lock:
            if key not in self._scores:
                started = time.perf_counter()
                try:
                    self._scores[key] = support_score(self.lm, claim, passage)
                    self._record(time.perf_counter() - started)
                except GenerationError as exc:  # a passage too long for the context included
                    log.warning("the model could not read a passage against a sentence (%s)", exc)
                    self._scores[key] = None
                self.reads += 1
            return self._scores[key]

    def _record(self, seconds: float) -> None:
        """Keep the fastest read on the model itself (a loaded LlamaModel keeps it for later answers): the
        start-up cost of a first prompt is not its price."""
        if hasattr(self.lm, "fastest_read_seconds"):
            known = measured_read_seconds(self.lm)
            self.lm.fastest_read_seconds = seconds if known is None else min(known, seconds)

    def vetoes(self, claim: str, passage: str) -> bool:
        """Whether the model reads the passage as not saying the claim (a failed read vetoes nothing)."""
        score = self.score(claim, passage)
        return score is not None and score < VETO_BELOW

    def __call__(self, claim: str, passage: str) -> float | None:
        score = self.score(claim, passage)
        return score if score is not None and score >= self.threshold else None
