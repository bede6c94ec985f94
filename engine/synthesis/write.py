"""OpenScholar-style writing with a small LM: draft each section, self-feedback, revise.

1. draft: one call per theme, each from the shared "question + evidence" prefix plus a short
   task naming the theme's evidence numbers;
2. feedback: one call on the whole draft, up to 3 items, each optionally with a search query;
3. revise: for sections a feedback item concerns, one call each; new passages found for the
   feedback's query come in with new numbers. Citations are verified afterwards, not here.
All calls are turns of one conversation (the evidence comes once, in the first user turn), so
each prompt extends the previous prompt plus its reply and the KV cache covers all but the new turn.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from engine.cite.markers import StreamFilter
from engine.cite.sentences import split_sentences
from engine.cite.support import content_words
from engine.generate.base import ChatMessage, Completion, LanguageModel, TokenCallback
from engine.progress import CancelToken
from engine.synthesis import prompts
from engine.synthesis.evidence import Evidence, Quote
from engine.synthesis.plan import Theme
from engine.types import StepCost

log = logging.getLogger(__name__)

StageCallback = Callable[[str], None]
MoreEvidence = Callable[[str], list[Evidence]]  # feedback query -> newly numbered evidence

MAX_FEEDBACK = 3
_TEMPLATE_OVERHEAD = 24  # tokens a chat template adds around two messages


@dataclass(frozen=True)
class FeedbackItem:
    text: str
    query: str = ""


@dataclass
class WriteOutcome:
    """The written sections (after revision), the first drafts, and what each call cost."""

    sections: list[str]
    drafts: list[str]
    feedback: list[FeedbackItem] = field(default_factory=list)
    extra: list[Evidence] = field(default_factory=list)
    steps: list[StepCost] = field(default_factory=list)
    cancelled: bool = False
    trimmed: str = ""  # what was left out to fit the model's context, if anything


@dataclass(frozen=True)
class WriterOptions:
    sentences_per_section: int = 2
    section_tokens: int = 110
    feedback_tokens: int = 96
    feedback: bool = True
    quote_chars: int = 320


def parse_feedback(text: str) -> list[FeedbackItem]:
    """``Feedback: ...`` lines, each with the ``Search: ...`` line that follows it (if any)."""
    items: list[FeedbackItem] = []
    for raw in text.splitlines():
        line = raw.strip().lstrip("-*0123456789. )")
        lowered = line.lower()
        if lowered.startswith("search:") and items:
            query = " ".join(line.split(":", 1)[1].split())[:200]
            items[-1] = FeedbackItem(items[-1].text, query)
        elif lowered.startswith("feedback:"):
            body = " ".join(line.split(":", 1)[1].split())[:300]
            if body:
                items.append(FeedbackItem(body))
    if not items:  # small models ignore the format: take plain lines that read like advice
        for raw in text.splitlines():
            line = " ".join(raw.strip().lstrip("-*0123456789. )").split())
            if len(line.split()) >= 4 and not line.lower().startswith("search:") and not _ECHO.match(line):
                items.append(FeedbackItem(line[:300]))
    return items[:MAX_FEEDBACK]


_ECHO = re.compile(r"^\s*(task|question|evidence|feedback|search|draft answer|new evidence)\s*:", re.IGNORECASE)


def clean_section(text: str, max_sentences: int) -> str:
    """The model's section without echoed prompt lines, repeated sentences or run-on rambling."""
    lines = [line for line in text.splitlines() if line.strip() and not _ECHO.match(line)]
    kept: list[str] = []
    seen: set[frozenset[str]] = set()
    for sentence in split_sentences(" ".join(" ".join(lines).split())):
        key = frozenset(content_words(sentence))
        if key in seen or not key:
            continue
        seen.add(key)
        kept.append(sentence)
        if len(kept) >= max_sentences:
            break
    return " ".join(kept)


class Writer:
    """Runs the draft / feedback / revise calls on one LanguageModel."""

    def __init__(self, lm: LanguageModel, options: WriterOptions | None = None, on_token: TokenCallback | None = None,
                 on_stage: StageCallback | None = None, cancel: CancelToken | None = None) -> None:
        self.lm = lm
        self.options = options or WriterOptions()
        self.on_token = on_token
        self.on_stage = on_stage or (lambda _stage: None)
        self.cancel = cancel

    # --- fitting the context ----------------------------------------------------------------

    def fit(self, question: str, themes: Sequence[Theme], titles: Mapping[int, str]) -> tuple[str, list[Theme], str]:
        """Drop the weakest quotes (then shorten the question) until the longest call fits the context."""
        opts = self.options
        # The conversation grows turn by turn: each section's task and reply, then feedback and up
        # to MAX_FEEDBACK revisions with their new evidence; all of it must fit after the prefix.
        reserve = len(themes) * (opts.section_tokens + 70) + _TEMPLATE_OVERHEAD
        if opts.feedback:
            reserve += opts.feedback_tokens + 90 + MAX_FEEDBACK * (opts.section_tokens + 90) + 250
        budget = self.lm.context_size - reserve
        quotes = sorted((q for t in themes for q in t.quotes), key=lambda q: -q.score)
        system = prompts.prompt("answer_system")
        note = ""

        def cost(q: str, kept: Sequence[Quote]) -> int:
            return self.lm.count_tokens(system + prompts.prefix(q, kept, titles, opts.quote_chars))

        dropped = 0
        while len(quotes) > 1 and cost(question, quotes) > budget:
            quotes.pop()
            dropped += 1
        while len(question) > 80 and cost(question, quotes) > budget:
            question = question[: len(question) * 2 // 3]
            note = "the question was shortened"
        if cost(question, quotes) > budget:
            raise ContextTooSmall(f"the model's context ({self.lm.context_size} tokens) cannot hold even one quote")
        if dropped:
            note = f"{dropped} weaker quotes were left out to fit the model's context" + (f"; {note}" if note else "")
        kept_ids = {id(q) for q in quotes}
        fitted = [Theme(t.title, tuple(q for q in t.quotes if id(q) in kept_ids)) for t in themes]
        return question, [t for t in fitted if t.quotes], note

    # --- the calls ----------------------------------------------------------------------------

    def _call(self, step: str, messages: list[ChatMessage], user: str, max_tokens: int, steps: list[StepCost],
              on_token: TokenCallback | None = None) -> Completion:
        """One more turn of the conversation: every call's prompt extends the previous prompt and its
        reply, so llama.cpp's prefix cache leaves only the new user turn to evaluate."""
        messages.append(ChatMessage("user", user))
        completion = self.lm.chat(messages, max_tokens=max_tokens, temperature=0.0, on_token=on_token,
                                  cancel=self.cancel)
        messages.append(ChatMessage("assistant", completion.text))
        steps.append(StepCost(step, completion.prompt_tokens, completion.prompt_tokens_evaluated,
                              completion.completion_tokens, round(completion.seconds_to_first_token, 3),
                              round(completion.seconds_total, 3)))
        return completion

    def write(self, question: str, themes: Sequence[Theme], titles: Mapping[int, str],
              more_evidence: MoreEvidence | None = None) -> WriteOutcome:
        """Draft every theme, then (optionally) feedback and revision, as one conversation."""
        opts = self.options
        question, fitted, note = self.fit(question, themes, titles)
        quotes = [q for t in fitted for q in t.quotes]
        head = prompts.prefix(question, quotes, titles, opts.quote_chars)
        outcome = WriteOutcome(sections=[], drafts=[], trimmed=note)
        stream = StreamFilter({q.n for q in quotes})
        messages = [ChatMessage("system", prompts.prompt("answer_system"))]
        self.on_stage("drafting")
        for index, theme in enumerate(fitted):
            if index and self.on_token:
                self.on_token("\n\n")
            task = prompts.draft_task(theme.title, theme.numbers, opts.sentences_per_section)

            def forward(piece: str) -> None:
                if self.on_token:
                    self.on_token(stream.feed(piece))

            completion = self._call(f"draft {index + 1}", messages, (head if index == 0 else "") + task,
                                    opts.section_tokens, outcome.steps, forward)
            if self.on_token:
                self.on_token(stream.flush())
            outcome.drafts.append(clean_section(completion.text, opts.sentences_per_section + 1))
            if completion.cancelled:
                outcome.cancelled = True
                break
        outcome.sections = list(outcome.drafts)
        if outcome.cancelled or not opts.feedback or not any(outcome.drafts):
            return outcome
        self._feedback_and_revise(fitted, more_evidence, messages, outcome)
        return outcome

    def _feedback_and_revise(self, themes: Sequence[Theme], more_evidence: MoreEvidence | None,
                             messages: list[ChatMessage], outcome: WriteOutcome) -> None:
        opts = self.options
        self.on_stage("revising")
        completion = self._call("feedback", messages, prompts.feedback_task(), opts.feedback_tokens, outcome.steps)
        if completion.cancelled:
            outcome.cancelled = True
            return
        outcome.feedback = parse_feedback(completion.text)
        targets: dict[int, list[FeedbackItem]] = {}
        for item in outcome.feedback:
            targets.setdefault(_closest_theme(item, themes), []).append(item)
        for section, items in sorted(targets.items()):
            new: list[Evidence] = []
            for item in items:
                if item.query and more_evidence is not None:
                    new.extend(more_evidence(item.query))
            new_quotes = [q for e in new for q in e.quotes]
            outcome.extra.extend(new)
            block = prompts.evidence_block(new_quotes, {e.reference.n: e.reference.title for e in new},
                                           opts.quote_chars)
            task = prompts.revise_task(" ".join(i.text for i in items), block, themes[section].title,
                                       opts.sentences_per_section)
            if self.cancel is not None and self.cancel.cancelled:
                outcome.cancelled = True
                return
            if self._tokens(messages) + self.lm.count_tokens(task) + opts.section_tokens + 16 > self.lm.context_size:
                log.info("no room left in the context for revising section %d", section + 1)
                break
            revised = self._call(f"revise {section + 1}", messages, task, opts.section_tokens, outcome.steps)
            if revised.cancelled:
                outcome.cancelled = True
                return
            text = clean_section(revised.text, opts.sentences_per_section + 1)
            if text:
                outcome.sections[section] = text

    def _tokens(self, messages: Sequence[ChatMessage]) -> int:
        return sum(self.lm.count_tokens(m.content) + 6 for m in messages) + _TEMPLATE_OVERHEAD


class ContextTooSmall(Exception):
    """Raised by Writer.fit; the pipeline answers with the evidence digest instead."""


def _closest_theme(item: FeedbackItem, themes: Sequence[Theme]) -> int:
    words = content_words(f"{item.text} {item.query}")
    scores = [len(words & content_words(t.title + " " + " ".join(q.text for q in t.quotes))) for t in themes]
    return max(range(len(themes)), key=lambda i: (scores[i], -i)) if themes else 0
