"""Picking a reranker by name; ``"auto"`` is what the dev-set measurement supports."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.errors import EngineError
from engine.rerank.base import NoReranker, Reranker

if TYPE_CHECKING:
    from engine.service import Engine

RERANKERS = ("auto", "none", "cross-encoder", "lm")
# benchmarks/retrieval_quality.py: see the README's Retrieval section for the figures behind this.
AUTO = "none"


def make_reranker(name: str, engine: Engine | None = None) -> Reranker:
    chosen = AUTO if name == "auto" else name
    if chosen == "none":
        return NoReranker()
    raise EngineError(f"Unknown reranker {name!r}; choose one of {', '.join(RERANKERS)}.")
