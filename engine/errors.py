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


class SettingsError(EngineError):
    """The settings file holds a value of the wrong type or out of range; the message names the key."""


class DocumentNotFoundError(EngineError):
    """No document in the library has the requested id (``doc_id``, empty for a passage id).

    The message suits the CLI (it points to `quire library list`); a front end that lists the papers
    itself words it its own way from ``doc_id``.
    """

    def __init__(self, message: str, doc_id: str = "") -> None:
        super().__init__(message)
        self.doc_id = doc_id


class ModelNotFoundError(EngineError):
    """A model file or folder is missing or is not a model."""


class ModelFileError(ModelNotFoundError):
    """A model file exists but cannot be used (not a GGUF, truncated, damaged). ``path`` names it."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class UnsupportedModelError(ModelFileError):
    """A well-formed GGUF whose architecture the installed llama.cpp cannot run."""

    def __init__(self, path: str, reason: str, architecture: str) -> None:
        super().__init__(path, reason)
        self.architecture = architecture


class TelemetryLiveError(ModelNotFoundError):
    """A model Quire runs on ONNX Runtime refused to load: the runtime's telemetry uploader runs in this process.

    A child of ModelNotFoundError so every caller degrades as for a missing model (keyword search only,
    citations marked not checked) instead of failing.
    """


class IndexCorruptError(EngineError):
    """A vector index on disk is damaged; it can be rebuilt from stored embeddings."""


class GenerationError(EngineError):
    """The language model failed while generating."""


class PromptTooLongError(GenerationError):
    """The prompt does not fit the model's context; the caller should send less (fewer passages)."""

    def __init__(self, prompt_tokens: int, context_size: int) -> None:
        super().__init__(f"The prompt has {prompt_tokens} tokens but the model's context holds {context_size}; "
                         "send fewer or shorter passages, or raise generation.context_size.")
        self.prompt_tokens = prompt_tokens
        self.context_size = context_size


class Cancelled(EngineError):
    """The user cancelled a long operation; what was finished is kept."""


class QueryError(EngineError):
    """A search query cannot be searched (empty, or no words in it)."""


class AskRequestError(QueryError):
    """A question cannot be answered as asked: an unknown mode, an empty question, or a scope naming a
    paper or datastore that is not there. The message says what to ask instead."""


class DownloadError(EngineError):
    """A download failed or was refused (HTML instead of a file, HTTP error, offline mode)."""


class ChecksumMismatchError(DownloadError):
    """A downloaded or installed file does not have the published sha256; it was not installed."""


class NotEnoughSpaceError(DownloadError):
    """The destination disk is (or became) too full for the file; nothing was installed."""


class ClaimError(EngineError):
    """A claim or its evidence cannot be judged (empty, or no words in it); the message says what to give."""


class DatastoreUnavailableError(EngineError):
    """A server datastore cannot answer now (down, refused, timed out, wrong schema); the message names it.

    Search leaves such a datastore out (with a notice) and goes on with the library and the others.
    """


class WatchError(EngineError):
    """A folder that cannot be watched (not a folder, a link loop, inside another watched one)."""


class ZoteroError(EngineError):
    """The folder is not a readable Zotero data folder."""
