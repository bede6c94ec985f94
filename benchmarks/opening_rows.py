"""A digest's opening, replayed from captured candidates; engine-free, so that reader_sweep.py can judge a
freshly trained reader by the openings it would give on a machine that has no engine installed.

A captured question (``opening_fit.py capture --read-all``) holds every candidate sentence of the passages
the digest chose: ``hand`` (the hand score), ``hand_rank`` (its rank by that score), ``relevant`` (the
candidate may open the digest), ``states`` (it holds the answer) and one score per reader key.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

PACKED_FIELDS = ("read_text", "hand", "hand_rank", "relevant", "states")


def replay_top(question: dict[str, Any], key: str, weight: float, read_limit: int | None) -> bool:
    """Does the opening state the answer when ``key`` is the reader, at this hand weight and read limit?"""
    rows = [c for c in question["candidates"] if c["relevant"]]
    if not rows:
        return False

    def score(c: dict[str, Any]) -> float:
        unread = read_limit is not None and c["hand_rank"] >= read_limit
        return -1e9 + c["hand"] if unread else c[key] + weight * c["hand"]
    return bool(max(rows, key=score)["states"])


def opening_rate(questions: list[dict[str, Any]], key: str, weight: float, read_limit: int | None) -> float:
    return round(sum(replay_top(q, key, weight, read_limit) for q in questions) / max(1, len(questions)), 3)


def write_packed(sets: dict[str, list[dict[str, Any]]], path: Path) -> None:
    """Only what a replay and a new reader need, gzipped (a lent machine's copy of the captures)."""
    packed = {name: [{"question": q["question"], "source": q.get("source", ""),
                      "candidates": [{f: c[f] for f in PACKED_FIELDS} for c in q["candidates"]]}
                     for q in questions] for name, questions in sets.items()}
    with gzip.open(path, "wt", encoding="utf-8") as file:
        json.dump(packed, file)


def read_packed(path: Path) -> dict[str, list[dict[str, Any]]]:
    with gzip.open(path, "rt", encoding="utf-8") as file:
        return json.load(file)
