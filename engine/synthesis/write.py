"""Writing with an LM: one call writes the direct answer, then a few short headed sections.

On a CPU every call costs its prompt and every token it writes, so the answer is one call: the
system message, the question and the evidence (quotes that address the question, best first),
and a task asking for the direct answer first and then at most ``sections`` headed sections.
The direct answer streams first. Optional self-feedback (OpenScholar's loop) adds two calls as
further turns of the same conversation, so llama.cpp's prefix cache evaluates only the new turn:
a feedback call (up to 3 items, each optionally with a search query) and one revision of the
whole answer with any new evidence. Citations are verified afterwards, not here.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from engine.cite.markers import MARKER, StreamFilter, strip_markers
from engine.cite.sentences import split_sentences, split_spans
from engine.cite.windows import content_words
from engine.generate.base import ChatMessage, Completion, LanguageModel, TokenCallback
from engine.progress import CancelToken
from engine.synthesis import prompts
from engine.synthesis.evidence import Evidence, Quote
from engine.synthesis.headings import section_heading
from engine.synthesis.plan import capitalised
from engine.synthesis.question import QuestionKind, analyse
from engine.text.artefacts import without_footnote_marks
from engine.text.sentences import ends_sentence
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


@dataclass(frozen=True)
class Written:
    """The model's answer split into its direct answer and headed sections."""

    direct: str
    sections: tuple[tuple[str, str], ...]  # (heading, text)


@dataclass
class WriteOutcome:
    """What the model wrote (after revision), its first draft, and what each call cost."""

    written: Written
    draft: str = ""
    feedback: list[FeedbackItem] = field(default_factory=list)
    extra: list[Evidence] = field(default_factory=list)
    steps: list[StepCost] = field(default_factory=list)
    cancelled: bool = False
    trimmed: str = ""  # what was left out to fit the model's context, if anything


@dataclass(frozen=True)
class WriterOptions:
    sections: int = 2
    sentences_per_section: int = 2
    answer_tokens: int = 160  # the whole answer: direct answer and sections
    feedback_tokens: int = 80
    feedback: bool = False  # two more LM calls per answer (docs/history/answers.md)
    # The prompt is most of a CPU answer's time: 855 prompt tokens took 68 s to the first token on the
    # loaded 2-core machine. Six quotes of at most 260 characters keep it near 600.
    quote_chars: int = 260
    max_quotes: int = 6


def yes_no(question: str) -> bool:
    return analyse(question).kind == QuestionKind.YES_NO


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


_ECHO = re.compile(r"^\s*((task|question|evidence|feedback|search|draft answer|new evidence|answer)\s*:|"
                   r"(\[\d+\]\s*)?[^\"“\n]{0,120}:\s*[\"“])", re.IGNORECASE)  # ... or an evidence line copied
# "The direct answer is that X" / "Answer: X": the prompt's words echoed; the answer is X.
_LEAD_IN = re.compile(r"^\s*(\**(the )?(direct |short )?answer( to the question)?( is)?( that)?\**\s*[:,-]?\s*)",
                      re.IGNORECASE)
# "[1], which states that X" after the lead-in: the model pointed at a passage; the answer is X.
_POINTER = re.compile(rf"^\s*({MARKER.pattern}\s*)+[,;:.-]?\s*"
                      r"((which\s+)?(states|says|shows|reports)\s+that\s+)?", re.IGNORECASE)
# "..., as evidenced by [3]." / "as shown in the evidence [7]": the model pointing at its source in words. The
# marker stays (verification checks it); the words would be left dangling once markers are moved.
_SOURCE_WORDS = re.compile(r",?\s*(as (evidenced|shown|demonstrated|reported|stated|seen|indicated|described) "
                           r"(by|in)|according to)( the)?( evidence| passage| study| paper)?\s*"
                           rf"(?={MARKER.pattern}\s*\)?[.;!?]?(\s|$))",
                           re.IGNORECASE)
_BRACKETED_MARKER = re.compile(rf"\(\s*({MARKER.pattern})\s*\)")  # "(as shown by [2])" -> "([2])" -> "[2]"
# "This evidence states that X": the prompt asks for X without talk of the evidence; the claim is X.
_EVIDENCE_SAYS = re.compile(r"^(this|the) (evidence|passage|study|paper|quote|source)s? (clearly )?(states|shows|says|"
                            r"indicates|suggests|reports|notes|mentions)( that)?\s*[:,]?\s*", re.IGNORECASE)
_YES_OR_NO = re.compile(r"^(yes|no)\b", re.IGNORECASE)
# Any length: a long "heading" is a sentence the model put after "##", and section_heading makes it one.
_HEADING = re.compile(r"^\s*(#{1,6}\s*|\*\*)(?P<title>[^#*\n]{2,}?)\**\s*:?\s*$")
_HASHES = re.compile(r"^\s*#{1,6}\s*")  # a heading's marks left on a line no heading was read from


def without_unfinished_end(text: str) -> str:
    """A reply cut at the token limit, up to its last finished sentence: the words after it ("This helps
    users efficiently identify") break off mid-claim, and cited they would look checked. A reply with no
    finished sentence is kept as it is."""
    for span in reversed(split_spans(text)):
        words = strip_markers(text[span.start:span.end]).split()
        if words and ends_sentence(words[-1]):
            return text[:span.end]
    return text


# Words that add nothing to a restated question ("can NOT be used" -> "cannot be used", "the answer").
_NO_NEWS = content_words("cannot not none answer answers evidence question following one")


def restates(sentence: str, question_words: set[str]) -> bool:
    """``sentence`` says nothing the question does not ("The drug that cannot be used ... is [1].")."""
    return (bool(question_words) and not _YES_OR_NO.match(sentence)
            and content_words(sentence) <= question_words | _NO_NEWS)


def clean_section(text: str, max_sentences: int, question: str = "") -> str:
    """A part of the model's answer without echoed prompt lines, repeated sentences or run-on rambling,
    and (given the question) without sentences that only restate it."""
    # Footnote digits the model copied from a quote ("7pronounced") go before anything reads the words.
    lines = [_BRACKETED_MARKER.sub(r"\1", _SOURCE_WORDS.sub(" ", without_footnote_marks(_HASHES.sub("", line))))
             for line in text.splitlines() if line.strip() and not _ECHO.match(line)]
    asked = content_words(question)
    kept: list[str] = []
    seen: set[frozenset[str]] = set()
    for sentence in split_sentences(" ".join(" ".join(lines).split())):
        sentence = capitalised(_EVIDENCE_SAYS.sub("", sentence))
        key = frozenset(content_words(sentence))
        if key in seen or not key or restates(sentence, asked):
            continue
        seen.add(key)
        kept.append(sentence)
        if len(kept) >= max_sentences:
            break
    return " ".join(kept)


def parse_answer(text: str, max_sections: int, sentences_per_section: int, question: str = "",
                 evidence: Sequence[str] = ()) -> Written:
    """Direct answer (everything before the first heading) and up to ``max_sections`` headed sections. Given
    the question, a direct-answer sentence that only restates it is dropped: it answers nothing. A heading
    that states a claim or copies the ``evidence`` (the quotes the model was given) opens its section as a
    sentence instead, so it is verified (engine/synthesis/headings.py)."""
    parts: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            title, sentence = section_heading(heading.group("title"), evidence)
            parts.append((title, [sentence] if sentence else []))
        else:
            parts[-1][1].append(line)
    # The lead-in goes before cleaning (which drops a line that starts "Answer:" as an echoed prompt)
    # and after it (an echoed line may have come first).
    direct = clean_section(_LEAD_IN.sub("", "\n".join(parts[0][1]).strip()), 2, question)
    direct = capitalised(_POINTER.sub("", _LEAD_IN.sub("", direct)).lstrip(",;: "))
    sections = []
    for title, lines in parts[1:]:
        body = clean_section("\n".join(lines), sentences_per_section)
        if body:
            sections.append((title, body))
    if not direct and sections:  # the model began with a heading: its first section is the answer
        direct = clean_section(sections.pop(0)[1], 2, question)
    return Written(direct, tuple(sections[:max_sections]))


def _finished(completion: Completion) -> str:
    """The reply's text, without the unfinished sentence it ends on when the token limit cut it."""
    return without_unfinished_end(completion.text) if completion.finish_reason == "length" else completion.text


class ContextTooSmall(Exception):
    """Raised by Writer.fit; the pipeline answers with the evidence digest instead."""


class Writer:
    """Runs the writing call (and optional feedback and revision) on one LanguageModel."""

    def __init__(self, lm: LanguageModel, options: WriterOptions | None = None, on_token: TokenCallback | None = None,
                 on_stage: StageCallback | None = None, cancel: CancelToken | None = None) -> None:
        self.lm = lm
        self.options = options or WriterOptions()
        self.on_token = on_token
        self.on_stage = on_stage or (lambda _stage: None)
        self.cancel = cancel

    def fit(self, question: str, quotes: Sequence[Quote], titles: Mapping[int, str]) -> tuple[str, list[Quote], str]:
        """Drop the weakest quotes (then shorten the question) until every call fits the context."""
        opts = self.options
        reserve = opts.answer_tokens + 120 + _TEMPLATE_OVERHEAD
        if opts.feedback:
            reserve += opts.feedback_tokens + 90 + opts.answer_tokens + 250
        budget = self.lm.context_size - reserve
        kept = sorted(quotes, key=lambda q: -q.answer)[: opts.max_quotes]
        system = prompts.prompt("answer_system")
        note = ""

        def cost(q: str, chosen: Sequence[Quote]) -> int:
            return self.lm.count_tokens(system + prompts.prefix(q, chosen, titles, opts.quote_chars))

        dropped = 0
        while len(kept) > 1 and cost(question, kept) > budget:
            kept.pop()
            dropped += 1
        while len(question) > 80 and cost(question, kept) > budget:
            question = question[: len(question) * 2 // 3]
            note = "the question was shortened"
        if cost(question, kept) > budget:
            raise ContextTooSmall(f"the model's context ({self.lm.context_size} tokens) cannot hold even one quote")
        if dropped:
            note = f"{dropped} weaker quotes were left out to fit the model's context" + (f"; {note}" if note else "")
        return question, kept, note

    def _call(self, step: str, messages: list[ChatMessage], user: str, max_tokens: int, steps: list[StepCost],
              on_token: TokenCallback | None = None) -> Completion:
        """One more turn of the conversation: its prompt extends the previous prompt and its reply, so
        llama.cpp's prefix cache leaves only the new user turn to evaluate."""
        messages.append(ChatMessage("user", user))
        completion = self.lm.chat(messages, max_tokens=max_tokens, temperature=0.0, on_token=on_token,
                                  cancel=self.cancel)
        messages.append(ChatMessage("assistant", completion.text))
        steps.append(StepCost(step, completion.prompt_tokens, completion.prompt_tokens_evaluated,
                              completion.completion_tokens, round(completion.seconds_to_first_token, 3),
                              round(completion.seconds_total, 3)))
        return completion

    def streamed(self, valid: set[int]) -> tuple[TokenCallback | None, Callable[[], None]]:
        """A token callback that never shows an unknown [n] (and the flush for its end)."""
        if self.on_token is None:
            return None, lambda: None
        stream = StreamFilter(valid)
        sink = self.on_token
        return (lambda piece: sink(stream.feed(piece))), (lambda: sink(stream.flush()))

    def write(self, question: str, quotes: Sequence[Quote], titles: Mapping[int, str],
              more_evidence: MoreEvidence | None = None) -> WriteOutcome:
        """The answer in one call; then, if enabled, feedback and one revision as later turns."""
        opts = self.options
        question, kept, note = self.fit(question, quotes, titles)
        head = prompts.prefix(question, kept, titles, opts.quote_chars)
        messages = [ChatMessage("system", prompts.prompt("answer_system"))]
        self.on_stage("drafting")
        forward, flush = self.streamed({q.n for q in kept})
        steps: list[StepCost] = []
        completion = self._call("write", messages, head + prompts.write_task(opts.sections, opts.sentences_per_section,
                                                                         yes_no(question),
                                                                         prompts.answer_language(question)),
                                opts.answer_tokens, steps, forward)
        flush()
        quoted = [q.text for q in kept]
        outcome = WriteOutcome(parse_answer(_finished(completion), opts.sections, opts.sentences_per_section, question,
                                            quoted),
                               draft=completion.text, steps=steps, trimmed=note, cancelled=completion.cancelled)
        # Feedback runs on any draft with text: a draft that missed the direct answer is the one a
        # revision can most improve.
        if outcome.cancelled or not opts.feedback or not completion.text.strip():
            return outcome
        self._feedback_and_revise(question, messages, more_evidence, outcome, quoted)
        return outcome

    def _feedback_and_revise(self, question: str, messages: list[ChatMessage], more_evidence: MoreEvidence | None,
                             outcome: WriteOutcome, quoted: Sequence[str] = ()) -> None:
        opts = self.options
        self.on_stage("revising")
        completion = self._call("feedback", messages, prompts.feedback_task(), opts.feedback_tokens, outcome.steps)
        if completion.cancelled:
            outcome.cancelled = True
            return
        outcome.feedback = parse_feedback(completion.text)
        if not outcome.feedback:
            return
        new: list[Evidence] = []
        for item in outcome.feedback:
            if item.query and more_evidence is not None:
                new.extend(more_evidence(item.query))
        outcome.extra.extend(new)
        block = prompts.evidence_block([q for e in new for q in e.quotes],
                                       {e.reference.n: e.reference.bib.title for e in new}, opts.quote_chars)
        task = prompts.revise_task(" ".join(i.text for i in outcome.feedback), block, opts.sections,
                                   opts.sentences_per_section)
        if self.cancel is not None and self.cancel.cancelled:
            outcome.cancelled = True
            return
        if self._tokens(messages) + self.lm.count_tokens(task) + opts.answer_tokens + 16 > self.lm.context_size:
            log.info("no room left in the context for revising the answer")
            return
        revised = self._call("revise", messages, task, opts.answer_tokens, outcome.steps)
        if revised.cancelled:
            outcome.cancelled = True
            return
        written = parse_answer(_finished(revised), opts.sections, opts.sentences_per_section, question,
                               [*quoted, *(q.text for e in outcome.extra for q in e.quotes)])
        if written.direct:
            outcome.written = written

    def _tokens(self, messages: Sequence[ChatMessage]) -> int:
        return sum(self.lm.count_tokens(m.content) + 6 for m in messages) + _TEMPLATE_OVERHEAD
