"""What the synthesis pipeline needs from a language model.

``LlamaModel`` (llama-cpp-python) implements it for real; tests use a scripted fake with the same
shape. Prompts are chat messages; the model applies its own chat template.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from engine.progress import CancelToken

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
        when ``cancel`` is set (the partial text is returned with ``cancelled=True``)."""
        ...
