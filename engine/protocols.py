"""What the layers above need from a language model, a reranker and a search, at the bottom of the engine.

Retrieval (query rewriting), reranking (the LM judge) and synthesis all talk to a language model,
and retrieval hands its candidates to a reranker; they depend on these shapes, never on
engine.generate or engine.rerank, so the layers stay independent of each other. ``LlamaModel``
(llama-cpp-python) implements :class:`LanguageModel` for real; tests use a scripted fake with the
same shape. Prompts are chat messages; the model applies its own chat template.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.types import SearchHit

TokenCallback = Callable[[str], None]


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class Completion:
    """What one call produced, with the prompt-cache accounting the benchmarks report."""

    text: str
    prompt_tokens: int  # tokens sent
    prompt_tokens_evaluated: int  # tokens actually evaluated (the rest came from the KV cache)
    completion_tokens: int
    seconds_to_first_token: float
    seconds_total: float
    cancelled: bool = False
    finish_reason: str = ""  # "stop" | "length" | "cancelled"


class LanguageModel(Protocol):
    @property
    def model_id(self) -> str: ...

    @property
    def context_size(self) -> int: ...

    def count_tokens(self, text: str) -> int: ...

    def chat(self, messages: Sequence[ChatMessage], *, max_tokens: int = 256, temperature: float = 0.0,
             stop: Sequence[str] = (), on_token: TokenCallback | None = None,
             cancel: CancelToken | None = None) -> Completion:
        """Generate a reply; ``on_token`` receives text pieces as they stream; stops between tokens
        when ``cancel`` is set (the partial text is returned with ``cancelled=True``). When the last
        message is the assistant's, the reply continues it: its text is the reply's start, not a finished
        turn, and the completion holds only what follows (retrieval while writing pauses and resumes so)."""
        ...


@runtime_checkable
class ScoresReplies(Protocol):
    """A language model that can say how likely each of a few one-word replies is, without generating.

    Used to let a capable model *judge* (does this sentence answer the question?) at the cost of
    reading the prompt once; ``LlamaModel`` reads the first reply token's probabilities."""

    def reply_probabilities(self, messages: Sequence[ChatMessage], replies: Sequence[str]) -> list[float]:
        """P(reply) for each reply as the start of the assistant's turn, normalised over ``replies``."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Reorders a short candidate list by a closer look at query and passage (engine.rerank)."""

    @property
    def name(self) -> str: ...

    def rerank(self, query: str, hits: Sequence[SearchHit], cancel: CancelToken | None = None) -> list[SearchHit]:
        """``hits`` reordered best first, each with its reranker score and a ``"rerank"`` rank."""
        ...


class NoReranker:
    """Keeps the fused order."""

    name = "none"

    def rerank(self, query: str, hits: Sequence[SearchHit], cancel: CancelToken | None = None) -> list[SearchHit]:
        return list(hits)


class Searcher(Protocol):
    """Hybrid search over the library and the datastores (engine.service_search.Search): ``source`` is
    "all", "library", "datastore" or a datastore's name; ``doc_ids`` limits it to those papers;
    ``rewrite``, ``rerank`` and ``spelling`` override the settings (None: as set); ``per_paper`` > 0 caps
    the passages of one paper; ``lexical_only``: BM25 alone (retrieval while writing searches so)."""

    def __call__(self, query: str, k: int = 10, source: str = "all", doc_ids: Collection[str] | None = None,
                 rewrite: bool | None = None, rerank: str | None = None, progress: ProgressCallback = no_progress,
                 cancel: CancelToken | None = None, spelling: bool | None = None,
                 per_paper: int = 0, lexical_only: bool = False) -> list[SearchHit]: ...
