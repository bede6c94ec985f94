"""Picking a reranker by name; ``"auto"`` is what the dev-set measurement supports.

Names: ``"none"``; ``"cross-encoder:/path/to/folder"`` (a saved sentence-transformers
CrossEncoder; plain ``"cross-encoder"`` looks in ``<home>/models/cross-encoder``); ``"lm"``
(the engine's language model grades candidates).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import EngineError
from engine.rerank.base import NoReranker, Reranker

if TYPE_CHECKING:
    from engine.protocols import LanguageModel

RERANKERS = ("auto", "none", "cross-encoder", "lm")
# What benchmarks/retrieval_quality.py supports today: no cross-encoder is installable here, and
# the bundled SmolLM2-135M as judge lowered nDCG@10 on the dev set (docs/history/retrieval.md).
AUTO = "none"


def make_reranker(name: str, *, models_dir: Path | None = None,
                  language_model: Callable[[], LanguageModel] | None = None) -> Reranker:
    """The reranker called ``name``; ``models_dir`` is where a plain "cross-encoder" is looked for,
    ``language_model`` loads the model the "lm" judge grades with (called only when it is chosen)."""
    chosen = AUTO if name in ("auto", "") else name
    if chosen == "none":
        return NoReranker()
    if chosen == "cross-encoder" or chosen.startswith("cross-encoder:"):
        from engine.rerank.cross_encoder import CrossEncoderReranker

        folder = chosen.partition(":")[2]
        if not folder:
            if models_dir is None:
                raise EngineError("Say where the cross-encoder is: 'cross-encoder:/path/to/folder'.")
            folder = str(models_dir / "cross-encoder")
        return CrossEncoderReranker(folder)
    if chosen == "lm":
        from engine.rerank.lm_judge import LMJudgeReranker

        if language_model is None:
            raise EngineError("The LM judge needs a language model.")
        return LMJudgeReranker(language_model())
    raise EngineError(f"Unknown reranker {name!r}; choose one of {', '.join(RERANKERS)} "
                      "(or 'cross-encoder:/path/to/folder').")
