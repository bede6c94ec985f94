"""BibTeX entries for the works an answer cites (one per document, not per passage)."""

from __future__ import annotations

import re

from engine.types import Answer, Reference

_SPECIAL = re.compile(r"([{}\\&%$#_^~])")


def _escape(text: str) -> str:
    return _SPECIAL.sub(lambda m: "\\" + m.group(1) if m.group(1) not in "\\^~" else " ", " ".join(text.split()))


def cite_key(reference: Reference) -> str:
    surname = re.sub(r"\W", "", (reference.authors[0].split()[-1] if reference.authors else "")).lower() or "anon"
    word = next((w for w in re.findall(r"[A-Za-z]+", reference.title) if len(w) > 3), "paper").lower()
    return f"{surname}{reference.year or ''}{word}"


def to_bibtex(answer: Answer) -> str:
    entries: list[str] = []
    seen: set[str] = set()
    for reference in answer.references:
        if reference.doc_id in seen:
            continue
        seen.add(reference.doc_id)
        fields = [("title", reference.title or "Untitled")]
        if reference.authors:
            fields.append(("author", " and ".join(reference.authors)))
        if reference.year:
            fields.append(("year", str(reference.year)))
        if reference.doi:
            fields.append(("doi", reference.doi))
        if reference.arxiv_id:
            fields += [("eprint", reference.arxiv_id), ("archivePrefix", "arXiv")]
        if reference.url:
            fields.append(("url", reference.url))
        body = ",\n".join(f"  {name} = {{{_escape(value)}}}" for name, value in fields)
        entries.append(f"@article{{{cite_key(reference)},\n{body}\n}}")
    return "\n\n".join(entries) + ("\n" if entries else "")
