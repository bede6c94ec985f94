"""The answer reader: how well does a sentence answer a question?

A small cross-encoder (all-MiniLM-L6-v2 trained here on experts' questions over scientific full text,
shipped as int8 ONNX in ``resources/models/reader``; rebuilt by ``benchmarks/train_reader.py``) reads
"question [SEP] sentence [SEP] the sentences around it" and gives one score. It was trained to put
the sentence that states the answer above its paper's other sentences, the near misses that share the
question's words included, so it ranks sentences that *answer* above sentences that are *about* the
question. Its score is a logit, added to the hand-weighted answer score at the weight ``reader.json``
holds (fitted by ``benchmarks/reader.py --fit``). It ranks; it does not decide that nothing answers: a
threshold fitted on its training side's papers told 25 of LitQA2's 42 answerable questions that no
sentence answers them (docs/history/answers.md), so its scores are not comparable across fields.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from engine.cite.judge import PairModel
from engine.cite.sentences import split_spans

NEIGHBOURS_SEPARATOR = " [SEP] "
MAX_NEIGHBOUR_CHARS = 300  # each neighbour is context, not the candidate: cut so the sentence itself is read whole


def reader_text(sentence: str, before: str = "", after: str = "") -> str:
    """What the reader reads beside the question: the sentence first (never cut off), then its neighbours."""
    around = " ".join(part[-MAX_NEIGHBOUR_CHARS:] if i == 0 else part[:MAX_NEIGHBOUR_CHARS]
                      for i, part in enumerate((before.strip(), after.strip())) if part)
    text = " ".join(sentence.split())
    return f"{text}{NEIGHBOURS_SEPARATOR}{' '.join(around.split())}" if around else text


def neighbours(text: str, start: int) -> tuple[str, str]:
    """The sentences of ``text`` just before and just after the one that holds offset ``start``."""
    every = split_spans(text)
    at = next((i for i, s in enumerate(every) if s.start <= start < s.end), None)
    if at is None:
        return "", ""
    before = text[every[at - 1].start:every[at - 1].end] if at else ""
    after = text[every[at + 1].start:every[at + 1].end] if at + 1 < len(every) else ""
    return before, after


def default_reader_folder() -> Path:
    """The reader shipped inside the package."""
    return Path(str(resources.files("resources") / "models" / "reader"))


class AnswerReader:
    """Scores (question, sentence in context) pairs; higher answers better."""

    def __init__(self, folder: Path | None = None, threads: int | None = None) -> None:
        self.model = PairModel(folder or default_reader_folder(), threads, meta_name="reader.json",
                               what="answer reader", rebuild_with="benchmarks/train_reader.py")
        self.hand_weight = float(self.model.meta.get("combine", {}).get("hand_weight", 0.0))
        self._cache: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def scores(self, question: str, candidates: Sequence[str]) -> np.ndarray:
        """One score per candidate (already made with :func:`reader_text`)."""
        question = " ".join(question.split())
        with self._lock:
            known = {c: self._cache[(question, c)] for c in candidates if (question, c) in self._cache}
        missing = list(dict.fromkeys(c for c in candidates if c not in known))
        if missing:
            logits = self.model.logits([(question, c) for c in missing])[:, 0]
            fresh = dict(zip(missing, (float(x) for x in logits), strict=True))
            with self._lock:
                if len(self._cache) > 8192:
                    self._cache.clear()
                self._cache.update({(question, c): v for c, v in fresh.items()})
            known.update(fresh)
        return np.array([known[c] for c in candidates], dtype=np.float32)


_default_lock = threading.Lock()
_default: AnswerReader | None = None


def default_reader() -> AnswerReader:
    """The shipped reader, loaded once per process."""
    global _default
    with _default_lock:
        if _default is None:
            _default = AnswerReader()
        return _default
