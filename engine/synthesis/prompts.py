"""Prompt files (resources/prompts/answer_*.txt) and the text that goes into them.

The layout is what makes the KV cache pay: the system message and the "question + evidence" block
open the first user turn, and every later call (feedback, revision) is one more turn of the same
conversation, so llama.cpp re-evaluates just the new turn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources

from engine.cite.markers import defuse_markers
from engine.synthesis.evidence import Quote
from engine.text.artefacts import without_footnote_marks
from engine.text.language import ENGLISH, UNKNOWN, language_name, question_language

# Chat-template control tokens of common model families: a PDF containing them must not be able
# to close the user turn and speak as the system. Quotes shown to people keep them (escaped).
_CONTROL = re.compile(r"<\|[^|<>]{0,40}\|>|</?s>|\[/?INST\]|<<SYS>>|<</SYS>>|<start_of_turn>|<end_of_turn>")


@cache
def prompt(name: str) -> str:
    """The text of resources/prompts/<name>.txt."""
    return resources.files("resources").joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8")


def inert(text: str) -> str:
    """Passage text made safe to place inside a prompt: control tokens removed, the paper's own
    citation markers defused (so the model cannot copy them as ours), whitespace collapsed."""
    return defuse_markers(" ".join(_CONTROL.sub(" ", text).split()))


def evidence_block(quotes: Sequence[Quote], titles: Mapping[int, str], quote_chars: int = 320) -> str:
    """``[n] Title: "quote" … "quote"`` lines, passages in the order of their best quote and each passage's
    quotes best first: the sentence that answers is what a small model reads first and copies most."""
    by_number: dict[int, list[Quote]] = {}
    for quote in sorted(quotes, key=lambda q: -q.answer):
        by_number.setdefault(quote.n, []).append(quote)
    lines = []
    for n, group in by_number.items():
        # Footnote digits glued to words ("7pronounced") are not put before the model: it copies them.
        texts = [f"\"{inert(without_footnote_marks(q.text))[:quote_chars]}\"" for q in group]
        title = inert(titles.get(n, ""))[:90]
        lines.append(f"[{n}] {title + ': ' if title else ''}{' … '.join(texts)}")
    return "\n".join(lines)


def prefix(question: str, quotes: Sequence[Quote], titles: Mapping[int, str], quote_chars: int = 320) -> str:
    """The head of the first user message: the question and the evidence."""
    return prompt("answer_evidence").format(question=inert(question),
                                            evidence=evidence_block(quotes, titles, quote_chars))


def evidence_last(question: str, task: str, passages: Sequence[Sequence[Quote]], titles: Mapping[int, str],
                  quote_chars: int = 320) -> str:
    """The first user message when passages are swapped while writing: the question and the task first,
    the evidence last, one passage's quotes after another in the order given. A swap then changes the
    prompt only from the first passage that differs, so llama.cpp re-evaluates that and the draft,
    never the task (engine.synthesis.ralm)."""
    block = "\n".join(evidence_block(quotes, titles, quote_chars) for quotes in passages if quotes)
    return f"Question: {inert(question)}\n\n{task.strip()}\n\nEvidence:\n{block}\n"


def answer_language(question: str) -> str:
    """The language to answer ``question`` in, by name ("German"); "" for English or a language that
    cannot be told (the prompt then says nothing about it)."""
    language = question_language(question)
    return "" if language in (ENGLISH, UNKNOWN) else language_name(language)


def write_task(sections: int, sentences: int, yes_no: bool = False, language: str = "") -> str:
    """The writing task; a yes/no question asks for "Yes" or "No" first (a reader looks for it there), and
    a question in another language than English asks for the answer in it (``language``, by name)."""
    hint = "\n" + prompt("answer_yes_no").strip() if yes_no else ""  # after the line asking for the answer
    task = prompt("answer_write").format(sections=sections, sentences=sentences, yes_no=hint)
    if language:
        task = task.rstrip("\n") + "\n" + prompt("answer_language").strip().format(language=language) + "\n"
    return task


def feedback_task() -> str:
    return prompt("answer_feedback_task")


def revise_task(feedback: str, new_evidence: str, sections: int, sentences: int) -> str:
    block = f"New evidence:\n{new_evidence}\n" if new_evidence else ""
    return prompt("answer_revise").format(feedback=inert(feedback), new_evidence=block, sections=sections,
                                          sentences=sentences)
