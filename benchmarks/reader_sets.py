"""The sets the answer reader is measured on, read from files in their own formats.

- any COVID-QA-format file (SQuAD-style JSON, one paper a document): every quotable sentence of each paper
  is a candidate, as benchmarks/reader_data.py builds them;
- any SelQA-format file (a list of questions, each with its section's ``candidates`` and the indices in
  ``answers``): the reader alone over each question's candidates, MAP and MRR, as SelQA's baselines report;
- Evidence Inference's validation trials (``check-ei`` in the reader's data): the doctors' evidence sentence
  among every quotable sentence of its trial.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from reader_data import covidqa  # noqa: E402
from sentence_bm25 import bm25_scores  # noqa: E402

from engine.cite.reader import AnswerReader, reader_text  # noqa: E402


def covidqa_file(path: Path) -> dict[str, Any]:
    """A COVID-QA-format file as the reader's data (``papers`` and ``questions``, split ``check``)."""
    papers: dict[str, Any] = {}
    questions: list[dict[str, Any]] = []
    covidqa(path, "check", papers, questions)
    return {"papers": papers, "questions": questions}


def average_precision(order: list[int], answers: set[int]) -> float:
    found, total = 0, 0.0
    for rank, i in enumerate(order, start=1):
        if i in answers:
            found += 1
            total += found / rank
    return total / max(1, len(answers))


def reciprocal_rank(order: list[int], answers: set[int]) -> float:
    return next((1 / rank for rank, i in enumerate(order, start=1) if i in answers), 0.0)


def selqa(path: Path, reader: AnswerReader, limit: int | None = None) -> dict[str, Any]:
    """MAP and MRR over a SelQA-format file: BM25 and the reader alone, each over a question's candidates
    (a candidate's neighbours in its section are the sentences around it, as the product reads a paper)."""
    import json

    items = [q for q in json.loads(path.read_text(encoding="utf-8")) if q.get("answers")][:limit]
    measured: dict[str, list[tuple[float, float]]] = {"bm25": [], "reader": []}
    for item in items:
        candidates = [" ".join(c.split()) for c in item["candidates"]]
        answers = set(item["answers"])
        texts = [reader_text(c, candidates[i - 1] if i else "", candidates[i + 1] if i + 1 < len(candidates) else "")
                 for i, c in enumerate(candidates)]
        for name, values in (("bm25", np.array(bm25_scores(item["question"], candidates))),
                             ("reader", reader.scores(item["question"], texts))):
            order = [int(i) for i in np.argsort(-values, kind="stable")]
            measured[name].append((average_precision(order, answers), reciprocal_rank(order, answers)))
    return {"questions": len(items), **{name: {"MAP": round(float(np.mean([m[0] for m in rows])), 4),
                                              "MRR": round(float(np.mean([m[1] for m in rows])), 4)}
                                       for name, rows in measured.items()}}
