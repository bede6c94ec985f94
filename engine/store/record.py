"""An Answer as plain JSON data (``quire ask --json``, the answers table) and back.

``citations`` lists each cited reference once with the full passage ``text`` and the ``quote``
of its first citing sentence (verbatim in ``text``); each sentence also lists its own quotes.
"""

from __future__ import annotations

from typing import Any

from engine.bibliography import Bibliography
from engine.types import (
    Answer,
    AnswerMode,
    AnswerSentence,
    Citation,
    PageRect,
    PaperReference,
    Rect,
    Reference,
    StepCost,
)

RECORD_VERSION = 1


def _rects(rects: tuple[PageRect, ...]) -> list[list[float]]:
    return [[r.page, *(round(v, 2) for v in r.rect)] for r in rects]


def _reference(reference: Reference) -> dict[str, Any]:
    bib = reference.bib.to_dict()
    # The title before the pages, the rest of the bibliography after them: the order records have always had.
    return {"n": reference.n, "passage_id": reference.passage_id, "doc_id": reference.doc_id,
            "source": reference.source, "title": bib.pop("title"), "page": reference.page,
            "page_end": reference.page_end, **bib, "text": reference.text}


def _citation(citation: Citation) -> dict[str, Any]:
    return {"n": citation.n, "passage_id": citation.passage_id, "quote": citation.quote,
            "quote_start": citation.quote_start, "quote_end": citation.quote_end, "support": citation.support,
            "verdict": citation.verdict, "inserted": citation.inserted, "rects": _rects(citation.rects)}


def _paper(paper: PaperReference) -> dict[str, Any]:
    return {"n": paper.n, "doc_id": paper.doc_id, "source": paper.source, **paper.bib.to_dict(),
            "pages": list(paper.pages), "passage_ids": list(paper.passage_ids)}


def _paper_from(data: dict[str, Any]) -> PaperReference:
    return PaperReference(n=data["n"], doc_id=data["doc_id"], source=data["source"], bib=Bibliography.from_dict(data),
                          pages=tuple(data.get("pages", ())), passage_ids=tuple(data.get("passage_ids", ())))


def answer_to_dict(answer: Answer) -> dict[str, Any]:
    first: dict[str, Citation] = {}  # by passage: two passages of one paper share n, not their quotes
    for sentence in answer.sentences:
        for citation in sentence.citations:
            first.setdefault(citation.passage_id, citation)
    citations = []
    for reference in answer.references:
        cited = first.get(reference.passage_id)
        entry = _reference(reference)
        entry.update({"quote": cited.quote if cited else "", "rects": _rects(cited.rects) if cited else []})
        citations.append(entry)
    return {
        "version": RECORD_VERSION, "id": answer.id, "question": answer.question, "answer": answer.text,
        "mode": answer.mode.value, "notice": answer.notice, "cancelled": answer.cancelled,
        "sections": list(answer.sections),
        "papers": [_paper(paper) for paper in answer.papers],
        "sentences": [{"text": s.text, "citations": [c.n for c in s.citations], "supported": s.supported,
                       "support": s.support, "needs_citation": s.needs_citation, "section": s.section,
                       "quotes": [_citation(c) for c in s.citations],
                       "contradictions": [_citation(c) for c in s.contradictions]} for s in answer.sentences],
        "citations": citations,
        "contexts": [_reference(r) for r in answer.contexts],
        "timings": dict(answer.timings),
        "steps": [dict(vars(step)) for step in answer.steps],
        "unsupported_share": round(answer.unsupported_share, 4),
        "model": answer.model, "settings": dict(answer.settings), "created_at": answer.created_at,
    }


def _ref_from(data: dict[str, Any]) -> Reference:
    return Reference(n=data["n"], passage_id=data["passage_id"], doc_id=data["doc_id"], source=data["source"],
                     bib=Bibliography.from_dict(data), text=data["text"], page=data.get("page"),
                     page_end=data.get("page_end"))


def _rects_from(rows: list[list[float]]) -> tuple[PageRect, ...]:
    return tuple(PageRect(int(row[0]), Rect(*row[1:5])) for row in rows)


def _citation_from(data: dict[str, Any]) -> Citation:
    return Citation(n=data["n"], passage_id=data["passage_id"], quote=data["quote"], quote_start=data["quote_start"],
                    quote_end=data["quote_end"], support=data["support"], rects=_rects_from(data["rects"]),
                    inserted=data.get("inserted", False), verdict=data.get("verdict", "supported"))


def answer_from_dict(data: dict[str, Any]) -> Answer:
    """Rebuild an Answer saved by :func:`answer_to_dict`."""
    sentences = tuple(AnswerSentence(
        text=s["text"], supported=s["supported"], section=s.get("section", 0),
        needs_citation=s.get("needs_citation", True),
        support=s.get("support", "supported" if s["supported"] else "unsupported"),
        citations=tuple(_citation_from(c) for c in s.get("quotes", ())),
        contradictions=tuple(_citation_from(c) for c in s.get("contradictions", ())))
        for s in data["sentences"])
    return Answer(
        question=data["question"], text=data["answer"], sentences=sentences,
        references=tuple(_ref_from(c) for c in data["citations"]), mode=AnswerMode(data["mode"]),
        sections=tuple(data.get("sections", ())), contexts=tuple(_ref_from(c) for c in data.get("contexts", ())),
        notice=data.get("notice", ""), cancelled=data.get("cancelled", False),
        timings=tuple((k, float(v)) for k, v in data.get("timings", {}).items()),
        steps=tuple(StepCost(**step) for step in data.get("steps", ())), model=data.get("model", ""),
        settings=tuple((k, str(v)) for k, v in data.get("settings", {}).items()), id=data.get("id", ""),
        created_at=data.get("created_at", 0.0), papers=tuple(_paper_from(p) for p in data.get("papers", ())))
