"""A deterministic, model-free embedder: a test double and a last-resort fallback.

It is NOT a semantic model. Texts sharing words get similar vectors (the hashing trick over
lower-cased word tokens and word bigrams), which is enough for unit tests of caching, indexing
and fusion to be meaningful and fast, and nothing more. Never make it the default embedder.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence

import numpy as np

from engine.embed.base import normalize_rows
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress

_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Feature hashing of word unigrams and bigrams into ``dimension`` signed buckets."""

    def __init__(self, dimension: int = 384) -> None:
        if dimension < 2:
            raise ValueError("dimension must be at least 2")
        self._dimension = dimension

    @property
    def model_id(self) -> str:
        return f"hashing-v1-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str], batch_size: int = 32, progress: ProgressCallback = no_progress,
              cancel: CancelToken | None = None) -> np.ndarray:
        """Rows of zeros for texts without a single word token; unit rows otherwise."""
        vectors = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for start in range(0, len(texts), max(1, batch_size)):
            if cancel is not None:
                cancel.check()
            for row, text in enumerate(texts[start:start + batch_size], start):
                self._fill(vectors[row], text)
            done = min(start + batch_size, len(texts))
            progress(Progress("embed", done, len(texts)))
        return normalize_rows(vectors)

    def _fill(self, row: np.ndarray, text: str) -> None:
        tokens = _TOKEN.findall(text.lower())
        features = tokens + [f"{a} {b}" for a, b in itertools.pairwise(tokens)]
        for feature in features:
            # blake2b, not hash(): Python salts str hashes per process, and tests need the same
            # vector in every run.
            digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
            sign = 1.0 if digest & 1 else -1.0
            weight = 0.5 if " " in feature else 1.0
            row[(digest >> 1) % self._dimension] += sign * weight
