"""An embedder that remembers the vectors of the texts it embedded last.

Answers and tables rank every sentence of the passages they read by its embedding (the hand-weighted answer
score, the support scorer), and each one starts a new scorer. The same sentences come back again and again in
one session: a table over a library embeds the sentences of every paper's passages to decide which papers
address the question, then a second table over the same papers, or a follow-up question, reads most of them
again. Library text does not change under a session, so its vectors can be kept: the last ``max_texts`` texts
are remembered (least recently used first out), which at 384 dimensions is 1.5 KB a text.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from engine.embed.base import Embedder
from engine.progress import CancelToken, ProgressCallback, no_progress

DEFAULT_MAX_TEXTS = 20_000  # ~30 MB of 384-d float32 vectors: several tables' worth of sentences


class RememberingEmbedder:
    """Wraps ``embedder``: a text embedded before (and not pushed out since) is not embedded again."""

    def __init__(self, embedder: Embedder, max_texts: int = DEFAULT_MAX_TEXTS) -> None:
        self.embedder = embedder
        self.max_texts = max_texts
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # the app embeds from more than one worker thread

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    @property
    def dimension(self) -> int:
        return self.embedder.dimension

    def embed(self, texts: Sequence[str], batch_size: int = 32, progress: ProgressCallback = no_progress,
              cancel: CancelToken | None = None) -> np.ndarray:
        """As the wrapped embedder's ``embed``; only texts it has not remembered are embedded."""
        with self._lock:
            known = {text: self._vectors[text] for text in texts if text in self._vectors}
            for text in known:
                self._vectors.move_to_end(text)
        missing = list(dict.fromkeys(text for text in texts if text not in known))
        if missing:
            fresh = self.embedder.embed(missing, batch_size=batch_size, progress=progress, cancel=cancel)
            with self._lock:
                for text, vector in zip(missing, fresh, strict=True):
                    self._vectors[text] = vector
                    known[text] = vector
                while len(self._vectors) > self.max_texts:
                    self._vectors.popitem(last=False)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([known[text] for text in texts]).astype(np.float32, copy=False)

    def remembered(self) -> int:
        """How many texts' vectors are kept now."""
        with self._lock:
            return len(self._vectors)
