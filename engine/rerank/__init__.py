"""Pluggable reranking of fused candidates: none, a cross-encoder, or the language model as judge."""

from __future__ import annotations

from engine.rerank.base import NoReranker, Reranker, with_rerank_scores

__all__ = ["NoReranker", "Reranker", "with_rerank_scores"]
