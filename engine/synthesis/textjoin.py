"""Turn verified sentences back into answer text: one paragraph per section."""

from __future__ import annotations

from collections.abc import Sequence

from engine.types import AnswerSentence


def answer_text(sentences: Sequence[AnswerSentence], digest: bool = False) -> str:
    """Paragraphs per section; a quote (a digest's every sentence) stands on its own line."""
    paragraphs: list[list[str]] = []
    current = -1
    for sentence in sentences:
        if sentence.section != current or not paragraphs:
            paragraphs.append([])
            current = sentence.section
        paragraphs[-1].append(sentence.text)
    if digest:
        return "\n\n".join("\n".join(p) for p in paragraphs)
    return "\n\n".join(_prose(p) for p in paragraphs)


def _prose(paragraph: Sequence[str]) -> str:
    """Sentences joined by spaces; a verbatim quote (“...” [n]) on a line of its own."""
    lines: list[str] = []
    for sentence in paragraph:
        if lines and not sentence.startswith("“") and not lines[-1].startswith("“"):
            lines[-1] += " " + sentence
        else:
            lines.append(sentence)
    return "\n".join(lines)
