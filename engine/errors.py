"""One root error type with specific children; every message tells the user what to do."""

from __future__ import annotations


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""


class IngestError(EngineError):
    """A file could not be turned into a document. ``path`` names the file."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class PasswordRequiredError(IngestError):
    """The PDF is encrypted and no (or a wrong) password was supplied."""


class StoreError(EngineError):
    """The catalog database cannot be opened or written."""


class DocumentNotFoundError(EngineError):
    """No document in the library has the requested id."""


class ModelNotFoundError(EngineError):
    """A model file or folder is missing or is not a model."""


class IndexCorruptError(EngineError):
    """A vector index on disk is damaged; it can be rebuilt from stored embeddings."""


class GenerationError(EngineError):
    """The language model failed while generating."""


class Cancelled(EngineError):
    """The user cancelled a long operation; what was finished is kept."""
