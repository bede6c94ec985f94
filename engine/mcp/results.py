"""The MCP tools' structured results: engine values as plain JSON, each cited place with its quire:// link.

Field names follow `quire search --json` and `quire ask --json` where those exist, so a script and an
assistant read the same shapes.
"""

from __future__ import annotations

from typing import Any

from engine.bibliography import Bibliography
from engine.cite.claims import CheckedPassage, ClaimCheck, PairVerdict
from engine.links import open_link
from engine.render.links import citation_link, reference_link
from engine.table_types import PaperTable
from engine.types import LIBRARY_SOURCE, Answer, AnswerSentence, Document, Passage, SearchHit

# How each verifier verdict is shown to a reader (the marks of the app's answer view).
MARKS = {"supported": "supported", "partial": "partly supported", "unsupported": "not confirmed",
         "contradicted": "contradicted"}


def bib_json(bib: Bibliography) -> dict[str, Any]:
    return {"title": bib.title, "authors": list(bib.authors), "year": bib.year, "doi": bib.doi,
            "arxiv_id": bib.arxiv_id, "url": bib.url, "venue": bib.venue}


def hit_json(hit: SearchHit) -> dict[str, Any]:
    link = open_link(hit.doc_id, hit.page, hit.passage_id) if hit.source == LIBRARY_SOURCE else ""
    return {"passage_id": hit.passage_id, "paper": hit.doc_id, "source": hit.source, "title": hit.bib.title,
            "authors": list(hit.bib.authors), "year": hit.bib.year, "page": hit.page, "page_end": hit.page_end,
            "quote": hit.text, "score": round(hit.score, 6), "link": link}


def passage_json(passage: Passage, document: Document) -> dict[str, Any]:
    return {"passage_id": passage.id, "paper": document.id, "text": passage.text, "page": passage.page_start,
            "page_end": passage.page_end, "kind": passage.kind, "bib": bib_json(document.bib),
            "link": open_link(document.id, passage.page_start, passage.id)}


def document_json(document: Document) -> dict[str, Any]:
    return {"paper": document.id, **bib_json(document.bib), "pages": document.page_count,
            "passages": document.passage_count, "status": str(document.status),
            "collections": list(document.collections), "resource": f"quire://paper/{document.id}"}


def _sentence_json(answer: Answer, sentence: AnswerSentence) -> dict[str, Any]:
    return {"text": sentence.text, "verification": MARKS.get(sentence.support, sentence.support),
            "needs_citation": sentence.needs_citation,
            "citations": [{"n": c.n, "passage_id": c.passage_id, "quote": c.quote, "verdict": c.verdict,
                           "link": citation_link(answer, c)} for c in sentence.citations],
            "contradicted_by": [{"passage_id": c.passage_id, "quote": c.quote, "link": citation_link(answer, c)}
                                for c in sentence.contradictions]}


def answer_json(answer: Answer) -> dict[str, Any]:
    references = []
    for paper in answer.papers:
        first = next((r for r in answer.references if r.n == paper.n), None)
        references.append({"n": paper.n, "paper": paper.doc_id, "source": paper.source, **bib_json(paper.bib),
                           "pages": list(paper.pages), "passage_ids": list(paper.passage_ids),
                           "link": reference_link(first) if first else ""})
    return {"question": answer.question, "answer": answer.text, "mode": answer.mode.value, "notice": answer.notice,
            "cancelled": answer.cancelled, "id": answer.id,
            "sentences": [_sentence_json(answer, s) for s in answer.sentences], "references": references}


def _checked_json(checked: CheckedPassage) -> dict[str, Any]:
    link = (open_link(checked.doc_id, checked.page, checked.passage_id, checked.quote)
            if checked.source == LIBRARY_SOURCE else "")
    return {"passage_id": checked.passage_id, "paper": checked.doc_id, "title": checked.title, "page": checked.page,
            "verdict": checked.verdict, "score": round(checked.score, 4), "quote": checked.shown_quote,
            "reason": checked.reason, "link": link}


def claim_json(check: ClaimCheck) -> dict[str, Any]:
    supporting, contradicting = check.supporting, check.contradicting
    verdict = "supported" if supporting else "contradicted" if contradicting else "not supported"
    return {"claim": check.claim, "verdict": verdict, "supporting": [_checked_json(p) for p in supporting],
            "contradicting": [_checked_json(p) for p in contradicting],
            "closest": [_checked_json(p) for p in check.closest()], "notes": list(check.notes)}


def table_json(table: PaperTable) -> dict[str, Any]:
    rows = []
    for row in table.rows:
        cells = {}
        for column, cell in zip(table.columns, row.cells, strict=False):
            link = open_link(row.doc_id, cell.page, cell.passage_id, cell.quote) if cell.passage_id else ""
            cells[column.name] = {"text": cell.text, "quote": cell.quote, "page": cell.page,
                                  "passage_id": cell.passage_id, "link": link}
        rows.append({"paper": row.doc_id, **bib_json(row.bib), "cells": cells})
    return {"question": table.question, "columns": [{"name": c.name, "question": c.question} for c in table.columns],
            "rows": rows, "papers_in_scope": table.papers_in_scope, "notice": table.notice,
            "cancelled": table.cancelled}


def pairs_json(claim: str, passages: list[Passage], verdicts: list[PairVerdict]) -> dict[str, Any]:
    """The verdict on a claim judged against the passages the caller named, shaped as `claim_json`'s."""
    judged = []
    for passage, verdict in zip(passages, verdicts, strict=True):
        judgement = verdict.judgement
        judged.append({"passage_id": passage.id, "paper": passage.doc_id, "title": passage.title,
                       "page": passage.page_start, "verdict": judgement.verdict,
                       "score": round(judgement.score, 4), "quote": judgement.quote, "reason": judgement.reason,
                       "link": open_link(passage.doc_id, passage.page_start, passage.id, judgement.quote)})
    supporting = [p for p in judged if p["verdict"] in ("supported", "partial")]
    contradicting = [p for p in judged if p["verdict"] == "contradicted"]
    verdict_shown = "supported" if supporting else "contradicted" if contradicting else "not supported"
    notes = sorted({note for verdict in verdicts for note in verdict.notes})
    return {"claim": claim, "verdict": verdict_shown, "supporting": supporting, "contradicting": contradicting,
            "closest": [] if supporting or contradicting else judged, "notes": notes}
