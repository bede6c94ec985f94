"""int8 embedding through ONNX Runtime: the model exported once, quantised, cached on disk.

Why not torch's dynamic quantisation: on the dev set (benchmarks/embed_onnx.py) both ran ~2.3x
raw fp32 ``SentenceTransformer.encode`` on this 2-core CPU, but torch's int8 vectors had a mean
cosine of 0.92 to the fp32 ones and cost 1.1 points of hybrid nDCG@10, while ONNX Runtime's int8
(per-channel symmetric weights, the avx512-vnni settings of sentence-transformers'
``export_dynamic_quantized_onnx_model``) kept a cosine of 0.994 and lost 0.1 point.

Only models that are a transformer followed by mean pooling (and optionally normalisation), as
the bundled all-MiniLM-L6-v2 and most sentence-transformers retrievers are, are run this way;
:func:`onnx_int8_supported` says which. Pooling is done here in NumPy, as sentence-transformers'
``Pooling`` and ``Normalize`` modules do it.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.embed.base import normalize_rows
from engine.errors import TelemetryLiveError
from engine.process import ONNX_RUNTIME_CAME_FIRST, keep_onnx_runtime_offline, onnx_runtime_telemetry_live

log = logging.getLogger(__name__)

MODEL_FILE = "model.int8.onnx"
FP32_MODEL_FILE = "model.fp32.onnx"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

# Texts -> the model's inputs by name (input_ids, attention_mask, maybe token_type_ids), padded to
# the longest text and cut at the model's maximum length.
Tokenize = Callable[[list[str]], Mapping[str, Any]]


def hf_tokenize(tokenizer: Any, max_length: int) -> Tokenize:
    """A Hugging Face tokenizer (of a loaded SentenceTransformer) as a :data:`Tokenize`."""
    def tokenize(texts: list[str]) -> Mapping[str, Any]:
        return tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="np")

    return tokenize


def onnx_runtime_available() -> bool:
    """Whether ONNX Runtime and the onnx package (for quantising) can be imported."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


def onnx_int8_supported(folder: Path) -> bool:
    """Whether the sentence-transformers model in ``folder`` is transformer + mean pooling (+ normalise)."""
    try:
        modules = json.loads((folder / "modules.json").read_text())
        kinds = [str(module["type"]).rsplit(".", 1)[-1] for module in modules]
        if kinds[:2] != ["Transformer", "Pooling"] or any(kind != "Normalize" for kind in kinds[2:]):
            return False
        pooling = json.loads((folder / modules[1]["path"] / "config.json").read_text())
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return False
    modes = {key: value for key, value in pooling.items() if key.startswith("pooling_mode_")}
    return modes.get("pooling_mode_mean_tokens") is True and not any(
        value for key, value in modes.items() if key != "pooling_mode_mean_tokens")


def export_onnx(model: Any, folder: Path, *, quantize: bool) -> Path:
    """The ONNX file of a loaded (fp32) SentenceTransformer, int8 (``quantize``) or fp32, exported into
    ``folder`` unless already there. The fp32 file lets citation support be judged at full precision
    without importing torch."""
    target = folder / (MODEL_FILE if quantize else FP32_MODEL_FILE)
    if target.is_file():
        return target
    import torch
    from onnx import TensorProto

    keep_onnx_runtime_offline()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    staging = folder.with_name(folder.name + f".exporting-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        transformer = model[0].auto_model.eval()
        # Exported through scaled_dot_product_attention the graph runs no faster than torch.
        transformer.set_attn_implementation("eager")
        plain = staging / "model.onnx"
        sample = torch.ones(2, 16, dtype=torch.long)
        axes = {0: "batch", 1: "tokens"}
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # the tracer's notes on shapes it records as constants
            torch.onnx.export(_last_hidden_state(transformer), (sample, sample, torch.zeros_like(sample)), str(plain),
                              dynamo=False, input_names=list(_INPUTS), output_names=["last_hidden_state"],
                              opset_version=17, dynamic_axes={**{name: axes for name in _INPUTS},
                                                              "last_hidden_state": axes})
            if quantize:
                logging.disable(logging.WARNING)  # the quantiser advises "pre-processing" on the root logger
                try:
                    quantize_dynamic(str(plain), str(staging / MODEL_FILE), per_channel=True, reduce_range=False,
                                     weight_type=QuantType.QInt8,
                                     extra_options={"WeightSymmetric": True, "ActivationSymmetric": False,
                                                    "DefaultTensorType": TensorProto.FLOAT})
                finally:
                    logging.disable(logging.NOTSET)
        folder.mkdir(parents=True, exist_ok=True)
        if quantize and not (folder / FP32_MODEL_FILE).exists():
            os.replace(plain, folder / FP32_MODEL_FILE)  # made on the way: kept for full-precision support checks
        os.replace(staging / MODEL_FILE if quantize else plain, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log.info("exported an %s ONNX copy of the embedder to %s", "int8" if quantize else "fp32", target)
    return target


def _last_hidden_state(transformer: Any) -> Any:
    """A module around a Hugging Face encoder returning only ``last_hidden_state`` (what is exported)."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    return LastHiddenState()


def refuse_live_telemetry() -> None:
    """Raise :class:`TelemetryLiveError` where ONNX Runtime's uploader runs in this process (it came before
    the engine): the embedder's sessions would be reported."""
    if onnx_runtime_telemetry_live():
        raise TelemetryLiveError(f"The embedding model does not run in this process: {ONNX_RUNTIME_CAME_FIRST}")


class OnnxInt8Encoder:
    """Runs the exported model: tokenise, run, mean-pool over real tokens, normalise."""

    def __init__(self, path: Path, tokenize: Tokenize) -> None:
        refuse_live_telemetry()
        keep_onnx_runtime_offline()  # here too: a script may use the engine without prepare_process()
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._inputs = [node.name for node in self._session.get_inputs()]
        self._tokenize = tokenize

    def output_width(self) -> int | None:
        """The hidden size the graph declares for each token, or None where it is left symbolic."""
        width = self._session.get_outputs()[0].shape[-1]
        return width if isinstance(width, int) else None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        tokens = self._tokenize(list(texts))
        feeds = {name: np.asarray(tokens[name], dtype=np.int64) for name in self._inputs if name in tokens}
        if "token_type_ids" in self._inputs and "token_type_ids" not in feeds:
            feeds["token_type_ids"] = np.zeros_like(feeds["input_ids"])
        hidden = self._session.run(None, feeds)[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return normalize_rows(pooled.astype(np.float32))
