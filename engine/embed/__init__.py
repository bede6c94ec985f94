"""Passages -> L2-normalised float32 vectors, cached by (model id, content hash).

``Embedder`` is the protocol every model implements; :class:`SentenceTransformerEmbedder` is the
real one (the packaged all-MiniLM-L6-v2 by default), :class:`HashingEmbedder` a deterministic
double for unit tests. :func:`embed_passages` embeds only what :class:`EmbeddingCache` lacks.
"""

from __future__ import annotations

from engine.embed.base import Embedder, embed_queries, normalize_rows
from engine.embed.cache import EmbeddingCache
from engine.embed.hashing import HashingEmbedder
from engine.embed.pipeline import EmbeddingResult, embed_passages
from engine.embed.sentence import SentenceTransformerEmbedder, local_model_id

__all__ = [
    "Embedder",
    "EmbeddingCache",
    "EmbeddingResult",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "embed_passages",
    "embed_queries",
    "local_model_id",
    "normalize_rows",
]
