"""What the synthesis pipeline needs from a language model: the protocol and its messages.

They are defined in engine.protocols, at the bottom of the engine, so that retrieval and reranking
can take a language model without importing this package; named here too for the code that
implements them (engine.generate.llama) and its tests.
"""

from __future__ import annotations

from engine.protocols import ChatMessage, Completion, LanguageModel, TokenCallback

__all__ = ["ChatMessage", "Completion", "LanguageModel", "TokenCallback"]
