"""The cached int8 ONNX embedder opened without torch: what a search that starts cold needs.

Loading a SentenceTransformer imports torch, transformers and sentence-transformers (about 8 s
on a 2-core machine) only to learn the vector size and the tokenizer, though the queries are then
embedded by ONNX Runtime. Once the int8 file has been exported, everything else is in the model
folder: the vector size in the pooling module's config, the maximum length in
``sentence_bert_config.json`` and the tokenizer in ``tokenizer.json``, which the ``tokenizers``
library (the Rust code under transformers' fast tokenizers) runs directly. Anything missing or
unusual returns None and the caller loads the model the slow way, which is always right.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from engine.embed.onnx_int8 import FP32_MODEL_FILE, MODEL_FILE, OnnxInt8Encoder, Tokenize

log = logging.getLogger(__name__)


def ships_onnx(folder: Path) -> bool:
    """Whether the model folder holds its own int8 and fp32 ONNX copies, as Quire exports them.

    The packaged app's embedder is such a folder (configs, tokenizer and the two exports, no torch
    weights): it was exported once when the package was built, so the app never needs torch.
    """
    return (folder / MODEL_FILE).is_file() and (folder / FP32_MODEL_FILE).is_file()


def pooled_dimension(folder: Path) -> int | None:
    """The sentence vector size a transformer + pooling model in ``folder`` declares, or None."""
    try:
        modules = json.loads((folder / "modules.json").read_text())
        pooling = json.loads((folder / modules[1]["path"] / "config.json").read_text())
        dimension = int(pooling["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    return dimension if dimension > 0 else None


def max_seq_length(folder: Path) -> int | None:
    """The maximum tokens per text sentence-transformers would use for ``folder``, or None."""
    try:
        length = int(json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return length if length > 0 else None


def fast_tokenize(folder: Path, max_length: int) -> Tokenize | None:
    """``tokenizer.json`` run by ``tokenizers`` as transformers' fast tokenizer runs it, or None."""
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    except Exception:  # not installed, no such file, or a format this version cannot read
        return None
    padding = tokenizer.padding
    if padding is None or "pad_id" not in padding:
        return None
    # The file's own settings (a fixed pad length, its own truncation) are replaced by what
    # sentence-transformers asks for at each call: pad to the longest text, cut at max_length.
    tokenizer.enable_padding(pad_id=padding["pad_id"], pad_type_id=padding.get("pad_type_id", 0),
                             pad_token=padding.get("pad_token", "[PAD]"), direction=padding.get("direction", "right"))
    tokenizer.enable_truncation(max_length=max_length)

    def tokenize(texts: list[str]) -> dict[str, Any]:
        encodings = tokenizer.encode_batch(texts)
        return {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64)}

    return tokenize


def open_cached_encoder(onnx_file: Path, folder: Path, max_length: int | None) -> tuple[OnnxInt8Encoder, int] | None:
    """The encoder for an already exported ``onnx_file`` of the model in ``folder``, and its vector size.

    None when the file is not there or the folder does not say all that is needed without loading
    the model; ``max_length`` overrides the folder's maximum length, as settings may.
    """
    if not onnx_file.is_file():
        return None
    dimension = pooled_dimension(folder)
    length = max_length or max_seq_length(folder)
    tokenize = fast_tokenize(folder, length) if length else None
    if dimension is None or tokenize is None:
        return None
    try:
        encoder = OnnxInt8Encoder(onnx_file, tokenize)
    except Exception:  # a damaged file: the slow way exports it again
        log.warning("the cached ONNX embedder %s cannot be opened; loading the model", onnx_file)
        return None
    if encoder.output_width() not in (None, dimension):
        log.warning("the cached ONNX embedder in %s does not match the model's config; loading the model", onnx_file)
        return None
    return encoder, dimension
