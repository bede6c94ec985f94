"""Retrieval while writing (In-Context RALM, Ram et al. 2023): the passages the model reads change as it writes.

Drafting pauses every ``stride`` tokens (or, the coarser variant, at each sentence end), searches with the
question and the last ``query_tokens`` tokens of the draft, puts the passages found in place of the ones
shown, and lets the model continue its own reply (a last assistant message is continued:
engine.protocols.LanguageModel). What the draft cites stays in the prompt; found passages fill the rest up
to the writer's quote budget.

Numbers never move: a passage keeps the number it was first shown with, and a new one takes the next free
number, so every ``[n]`` written before or after a swap names the passage it was written from, and
verification reads the draft as it reads a retrieve-once draft (the passages shown are added to what the
answer was given). The prompt puts the question and the task first and the evidence last: a swap changes
the prompt from the first passage that differs, so llama.cpp's KV cache keeps the system message, the
question, the task and the passages that stay (they keep their order, ahead of the new ones), and
re-evaluates only from the first change: the new passages and the draft so far. A search that finds the
passages already shown changes nothing and costs no re-evaluation.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from engine.cite.markers import MARKER, cited_numbers, strip_markers
from engine.errors import Cancelled
from engine.generate.base import ChatMessage, Completion, LanguageModel, TokenCallback
from engine.progress import CancelToken
from engine.synthesis import prompts
from engine.synthesis.evidence import Evidence, Quote
from engine.synthesis.write import StageCallback, WriteOutcome, Writer, WriterOptions, parse_answer, yes_no
from engine.types import StepCost

log = logging.getLogger(__name__)

SENTENCE_END = -1  # retrieval_stride value: search again at each sentence end instead of every n tokens
Found = Callable[[str], list[Evidence]]  # query -> the passages it finds, numbered for good, best first

# The next sentence has begun: a sentence's end (and the markers after it), then a space and a character
# that starts a sentence or a heading. Pausing only then keeps a "claim. [2]" marker with its sentence.
_NEXT_SENTENCE = re.compile(rf"[.!?][\"”')]?(\s*{MARKER.pattern})*\.?\s+[A-Z#*\d“\"(]")


@dataclass(frozen=True)
class RetrievalWhileWriting:
    """``stride`` > 0: search again every ``stride`` tokens; SENTENCE_END: at each sentence end; 0: never."""

    stride: int = 0
    query_tokens: int = 32  # the draft's last tokens in the query (In-Context RALM: 32 best with BM25)
    passages: int = 6  # passages a search returns to fill the evidence block from

    @property
    def on(self) -> bool:
        return self.stride != 0


@dataclass
class _Block:
    """The evidence shown: passages in prompt order, each with its quotes."""

    passages: list[tuple[int, tuple[Quote, ...]]]

    @property
    def numbers(self) -> tuple[int, ...]:
        return tuple(n for n, _ in self.passages)


def compose(shown: _Block, cited: set[int], found: Sequence[Evidence], max_quotes: int) -> _Block:
    """The next block: the passages the draft cites, then the found passages best first until ``max_quotes``
    quotes are shown. Nothing cited is ever dropped. Passages shown before keep their order and come
    first, so a swap leaves the block's unchanged head (and its KV cache) in place."""
    quotes_of = {n: quotes for n, quotes in shown.passages}
    wanted = [n for n, _ in shown.passages if n in cited]
    room = max_quotes - sum(len(quotes_of[n]) for n in wanted)
    for item in found:
        n = item.reference.n
        if room <= 0:
            break
        if n in wanted or not item.quotes:
            continue
        quotes_of.setdefault(n, item.quotes_by_score[:room])
        wanted.append(n)
        room -= len(quotes_of[n])
    chosen = set(wanted)
    kept = [n for n, _ in shown.passages if n in chosen]
    return _Block([(n, quotes_of[n]) for n in kept + [n for n in wanted if n not in kept]])


def draft_tail(lm: LanguageModel, draft: str, tokens: int) -> str:
    """The draft's last ``tokens`` tokens (whole words, markers removed): the part of the query that moves."""
    words = strip_markers(draft).split()
    tail: list[str] = []
    for word in reversed(words):
        if lm.count_tokens(" ".join([word, *tail])) > tokens:
            break
        tail.insert(0, word)
    return " ".join(tail)


class _Pause(CancelToken):
    """Stops one writing call at a sentence end (set by the token callback), or when the user stops."""

    def __init__(self, user: CancelToken | None) -> None:
        super().__init__()
        self.user = user

    @property
    def cancelled(self) -> bool:
        return self.paused or (self.user is not None and self.user.cancelled)

    @property
    def paused(self) -> bool:
        return super().cancelled


@dataclass
class _Cost:
    """The accounting a benchmark reports: searches, swaps and the prompt tokens they re-evaluated."""

    searches: int = 0
    swaps: int = 0
    recomputed: int = 0  # prompt tokens evaluated by the calls that resumed the draft


class RetrievingWriter:
    """Writes the answer as Writer does, searching again while it writes (see the module docstring)."""

    def __init__(self, lm: LanguageModel, options: WriterOptions, ralm: RetrievalWhileWriting, find: Found,
                 on_token: TokenCallback | None = None, on_stage: StageCallback | None = None,
                 cancel: CancelToken | None = None) -> None:
        self.lm = lm
        self.options = options
        self.ralm = ralm
        self.find = find
        self.writer = Writer(lm, options, on_token, on_stage, cancel)
        self.on_stage = on_stage or (lambda _stage: None)
        self.cancel = cancel
        self.cost = _Cost()

    def write(self, question: str, quotes: Sequence[Quote], titles: Mapping[int, str]) -> WriteOutcome:
        """The draft, with the passages swapped as it goes; ``extra`` holds every passage shown beyond ``quotes``."""
        opts = self.options
        question, kept, note = self.writer.fit(question, quotes, titles)
        by_number: dict[int, list[Quote]] = {}
        for quote in sorted(kept, key=lambda q: -q.answer):
            by_number.setdefault(quote.n, []).append(quote)
        block = _Block([(n, tuple(group)) for n, group in by_number.items()])
        titles = dict(titles)
        shown: dict[int, Evidence] = {}  # passages shown that the caller did not give
        task = prompts.write_task(opts.sections, opts.sentences_per_section, yes_no(question),
                                  prompts.answer_language(question))
        valid = set(block.numbers)
        forward, flush = self.writer.streamed(valid)
        steps: list[StepCost] = []
        draft, produced, step, cancelled = "", 0, "write", False
        self.on_stage("drafting")
        while produced < opts.answer_tokens:
            user = prompts.evidence_last(question, task, [q for _, q in block.passages], titles, opts.quote_chars)
            messages = [ChatMessage("system", prompts.prompt("answer_system")), ChatMessage("user", user)]
            if draft:
                messages.append(ChatMessage("assistant", draft))
            completion, paused = self._resume(messages, opts.answer_tokens - produced, forward)
            draft += completion.text
            produced += completion.completion_tokens
            steps.append(StepCost(step, completion.prompt_tokens, completion.prompt_tokens_evaluated,
                                  completion.completion_tokens, round(completion.seconds_to_first_token, 3),
                                  round(completion.seconds_total, 3)))
            if step != "write":
                self.cost.recomputed += completion.prompt_tokens_evaluated
            if completion.cancelled and not paused:
                cancelled = True
                break
            if (completion.finish_reason == "stop" and not paused) or completion.completion_tokens == 0:
                break  # the model ended its answer
            if produced >= opts.answer_tokens:
                break
            try:
                found = self._search(question, draft, steps)
            except Cancelled:
                cancelled = True
                break
            if self.cancel is not None and self.cancel.cancelled:
                cancelled = True
                break
            cited = {n for n in cited_numbers(draft) if n in valid}
            swapped = compose(block, cited, found, opts.max_quotes)
            step = "write (continued)"
            if swapped.numbers != block.numbers:
                for item in found:
                    if item.reference.n in swapped.numbers and item.reference.n not in valid:
                        shown[item.reference.n] = item
                        titles[item.reference.n] = item.reference.bib.title
                valid.update(swapped.numbers)
                block = swapped
                self.cost.swaps += 1
                step = "write (after a swap)"
        flush()
        quoted = [q.text for _, group in block.passages for q in group]
        written = parse_answer(draft, opts.sections, opts.sentences_per_section, question, quoted)
        return WriteOutcome(written, draft=draft, steps=steps, cancelled=cancelled, trimmed=note,
                            extra=list(shown.values()))

    def _resume(self, messages: list[ChatMessage], budget: int, forward: TokenCallback | None,
                ) -> tuple[Completion, bool]:
        """One writing call up to the next pause: ``stride`` tokens, or the next sentence's start."""
        stride = self.ralm.stride
        pause = _Pause(self.cancel)
        chunk: list[str] = []

        def on_piece(piece: str) -> None:
            if forward is not None:
                forward(piece)
            if stride == SENTENCE_END:
                chunk.append(piece)
                if _NEXT_SENTENCE.search("".join(chunk)):
                    pause.cancel()

        limit = min(stride, budget) if stride > 0 else budget
        completion = self.lm.chat(messages, max_tokens=limit, temperature=0.0, on_token=on_piece, cancel=pause)
        user_stopped = self.cancel is not None and self.cancel.cancelled
        return completion, pause.paused and not user_stopped

    def _search(self, question: str, draft: str, steps: list[StepCost]) -> list[Evidence]:
        """The passages for the question and the draft's last tokens (timed as a step of its own)."""
        started = time.perf_counter()
        query = f"{question} {draft_tail(self.lm, draft, self.ralm.query_tokens)}".strip()
        found = self.find(query)
        self.cost.searches += 1
        seconds = round(time.perf_counter() - started, 3)
        steps.append(StepCost("search while writing", 0, 0, 0, seconds, seconds))
        return found


__all__ = ["SENTENCE_END", "Found", "RetrievalWhileWriting", "RetrievingWriter", "compose", "draft_tail"]
