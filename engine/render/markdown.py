"""An answer as Markdown: notice, sections, flagged sentences, then the numbered references with quotes."""

from __future__ import annotations

from engine.cite.markers import defuse_markers
from engine.render.common import reference_line
from engine.types import Answer, AnswerMode


def to_markdown(answer: Answer, quotes: bool = True) -> str:
    lines: list[str] = [f"**Q:** {answer.question}", ""]
    if answer.notice:
        lines += [f"> {answer.notice}", ""]
    if answer.cancelled:
        lines += ["*(cancelled — partial answer)*", ""]
    section = -1
    paragraph: list[str] = []
    for sentence in answer.sentences:
        if sentence.section != section:
            if paragraph:
                lines += [" ".join(paragraph) if answer.mode != AnswerMode.DIGEST else "\n".join(paragraph), ""]
                paragraph = []
            section = sentence.section
            if answer.sections and 0 <= section < len(answer.sections) and len(answer.sections) > 1:
                lines += [f"### {answer.sections[section]}", ""]
        text = sentence.text if sentence.supported else f"{sentence.text} *(unsupported)*"
        paragraph.append(f"- {text}" if answer.mode == AnswerMode.DIGEST else text)
    if paragraph:
        lines += [" ".join(paragraph) if answer.mode != AnswerMode.DIGEST else "\n".join(paragraph), ""]
    if answer.references:
        lines += ["## References", ""]
        first_quote = {c.n: c.quote for s in answer.sentences for c in reversed(s.citations)}
        for reference in answer.references:
            lines.append(f"[{reference.n}] {reference_line(reference)}")
            if quotes and answer.mode != AnswerMode.DIGEST and reference.n in first_quote:
                lines.append(f"    > “{defuse_markers(' '.join(first_quote[reference.n].split()))}”")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
