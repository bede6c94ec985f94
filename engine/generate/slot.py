"""The one language model an engine keeps loaded, held apart from the engine.

A GGUF model takes seconds to minutes to load on a CPU and as much memory as its file, so an engine
keeps one: the first caller loads it, later callers get the same object, and asking for another file
frees the loaded one first. The slot is an object of its own so that the code that answers, searches
and makes tables is handed the slot (through a plain callable), never the Engine that owns it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from engine.config import GenerationSettings
from engine.models import language_model_file

if TYPE_CHECKING:  # llama-cpp-python takes a while to import: only a load needs it
    from engine.generate.llama import LlamaModel


class LanguageModelSlot:
    """Holds at most one loaded :class:`LlamaModel`; thread-safe, so two callers never load it twice."""

    def __init__(self) -> None:
        # One per slot (one per engine): loading or swapping this engine's model never waits on another's.
        self._lock = threading.Lock()
        self._model: LlamaModel | None = None

    def get(self, settings: GenerationSettings, path: str | Path | None = None) -> LlamaModel:
        """The loaded model: ``path``, else ``settings.model``, else the bundled SmolLM2. Asking for a
        different file replaces (and frees) the loaded one; ModelNotFoundError when there is none."""
        from engine.generate.llama import LlamaModel

        wanted = language_model_file(path, settings.model).path
        with self._lock:
            current = self._model
            if current is not None and wanted is not None and current.path.resolve() == wanted.resolve():
                return current
            model = LlamaModel.from_settings(settings, wanted)
            if current is not None:
                current.close()
            self._model = model
            return model

    def close(self) -> None:
        """Free the loaded model, if any; the next :meth:`get` loads again."""
        with self._lock:
            model, self._model = self._model, None
        if model is not None:
            model.close()


__all__ = ["LanguageModelSlot"]
