"""Turn verified sentences back into answer text: one paragraph per section."""

from __future__ import annotations

from collections.abc import Sequence

from engine.types import AnswerSentence


def answer_text(sentences: Sequence[AnswerSentence], digest: bool = False) -> str:
    """Paragraphs per section; a digest puts each quote on its own line."""
    paragraphs: list[list[str]] = []
    current = -1
    for sentence in sentences:
        if sentence.section != current or not paragraphs:
            paragraphs.append([])
            current = sentence.section
        paragraphs[-1].append(sentence.text)
    joiner = "\n" if digest else " "
    return "\n\n".join(joiner.join(p) for p in paragraphs)
