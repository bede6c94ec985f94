"""What a question being answered is doing, in words: the phase, how long it has run, and while the
model writes, how many tokens at what speed and about how long is left.

Plain Python (the pane owns the timer that redraws it), so the wording can be tested without a window.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# The engine's names for its stages -> what the user reads.
PHASES = {"loading": "Loading the language model", "retrieving": "Searching your papers",
          "rewriting": "Rewriting the question", "reranking": "Ranking the passages",
          "judging": "Finding the sentences that answer", "drafting": "Drafting the answer",
          "feedback": "Reviewing the draft", "revising": "Revising", "verifying": "Verifying citations"}
WRITING = ("drafting", "revising", "feedback")
READING = "Reading the passages"  # a writing stage before its first token: the model reads its prompt


class AnswerProgress:
    """Phase, elapsed time and token rate of the answer being produced.

    ``budget`` is the most tokens one writing pass may produce, so the estimate is an upper bound
    that shrinks as the pass goes on; the model may stop earlier.
    """

    def __init__(self, budget: int = 160, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.budget = budget
        self.stage = ""
        self.started = clock()
        self.stage_started = self.started
        self.tokens = 0
        self.first_token_at: float | None = None

    def set_stage(self, stage: str) -> None:
        self.stage = stage
        self.stage_started = self._clock()
        if stage in WRITING:
            self.tokens, self.first_token_at = 0, None

    def token(self) -> None:
        if self.first_token_at is None:
            self.first_token_at = self._clock()
        self.tokens += 1

    def rate(self) -> float:
        """Tokens per second since the first token of this pass (0 before the second token)."""
        if self.first_token_at is None or self.tokens < 2:
            return 0.0
        seconds = self._clock() - self.first_token_at
        return (self.tokens - 1) / seconds if seconds > 0 else 0.0

    def text(self) -> str:
        """``Drafting the answer: 42 tokens at 6.1 tok/s, at most ~19 s left · 12 s`` and the like."""
        now = self._clock()
        elapsed = f"{now - self.stage_started:.0f} s"
        if self.stage in WRITING and self.tokens == 0:
            return f"{READING}… · {elapsed}"
        name = PHASES.get(self.stage, self.stage[:1].upper() + self.stage[1:])
        if self.stage not in WRITING:
            return f"{name}… · {elapsed}"
        rate = self.rate()
        words = f"{self.tokens} token{'s' if self.tokens != 1 else ''}"
        if rate <= 0:
            return f"{name}: {words} · {elapsed}"
        left = max(0, self.budget - self.tokens) / rate
        return f"{name}: {words} at {rate:.1f} tok/s, at most ~{left:.0f} s left · {elapsed}"

    def total_seconds(self) -> float:
        return self._clock() - self.started
