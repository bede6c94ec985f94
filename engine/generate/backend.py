"""The few places Quire talks to llama.cpp outside a loaded model.

- :func:`capture_llama_log` records what llama.cpp logs while a model loads, because its
  Python binding turns every load failure into the same "failed to load model" and the reason
  (``unknown model architecture: 'xyz'``, a tensor out of file bounds) is only in the log.
- :func:`probe_model` loads a file's vocabulary only, to learn whether the installed llama.cpp
  supports its architecture without reading the weights.
- :func:`llama_backend_info` is what llama.cpp says about GPU offload, for hardware detection.
"""

from __future__ import annotations

import contextlib
import ctypes
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llama_cpp

from engine.errors import ModelFileError, UnsupportedModelError

_LOG_LOCK = threading.Lock()
_backend_ready = False


class LlamaLog:
    """Every line llama.cpp logged while a capture was active."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, text: str) -> None:
        if text.strip():
            self.lines.append(text.strip())

    def reason(self) -> str:
        """The most telling error line, with llama.cpp's function-name prefixes removed."""
        for marker in ("error loading model:", "error", "failed"):
            for line in self.lines:
                if marker in line.lower():
                    return _clean(line)
        return ""

    def unknown_architecture(self) -> str | None:
        for line in self.lines:
            match = re.search(r"unknown model architecture: '([^']*)'", line)
            if match:
                return match.group(1)
        return None


def _clean(line: str) -> str:
    return re.sub(r"^(\w+: )+(error loading model: )?", "", line).strip()


@contextlib.contextmanager
def capture_llama_log() -> Iterator[LlamaLog]:
    """Route llama.cpp's log into a :class:`LlamaLog` for the duration, then restore the binding's."""
    log = LlamaLog()

    @llama_cpp.llama_log_callback  # type: ignore[misc]
    def callback(level: int, text: bytes, _user_data: ctypes.c_void_p) -> None:
        log.add(text.decode("utf-8", errors="replace"))

    with _LOG_LOCK:
        llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
        try:
            yield log
        finally:
            from llama_cpp import _logger  # the binding's own callback, set at its import

            llama_cpp.llama_log_set(_logger.llama_log_callback, ctypes.c_void_p(0))


def _ensure_backend() -> None:
    global _backend_ready
    if not _backend_ready:
        llama_cpp.llama_backend_init()
        _backend_ready = True


def probe_model(path: Path, architecture: str) -> None:
    """Load only the vocabulary of the model at ``path`` (whose GGUF header names ``architecture``);
    raise UnsupportedModelError / ModelFileError if llama.cpp refuses."""
    _ensure_backend()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    with capture_llama_log() as log:
        model = llama_cpp.llama_model_load_from_file(str(path).encode("utf-8"), params)
    if model is not None:
        llama_cpp.llama_model_free(model)
        return
    raise load_failure(str(path), log, architecture)


def load_failure(path: str, log: LlamaLog, architecture: str) -> ModelFileError:
    """The error to raise when llama.cpp refused a file that passed our own header checks."""
    unknown = log.unknown_architecture()
    if unknown is not None:
        return UnsupportedModelError(
            path, f"the model architecture '{unknown}' is not supported by the installed llama.cpp "
            f"(llama-cpp-python {llama_cpp.__version__}). Upgrade llama-cpp-python or choose a model of a "
            "supported family (llama, qwen2, phi3, gemma, mistral …).", unknown)
    reason = log.reason() or "llama.cpp could not load it"
    return ModelFileError(path, f"{reason} (architecture '{architecture or 'unknown'}'); the file may be damaged "
                          "or need a newer llama-cpp-python. Try downloading it again.")


def llama_backend_info() -> dict[str, Any]:
    """What the installed llama.cpp build can do: GPU offload, device count, CPU features.

    ``gpu_offload`` is False on CPU-only wheels (the default PyPI build); CUDA, Metal and Vulkan
    builds report True, and then ``n_gpu_layers`` (generation.gpu_layers) takes effect.
    """
    _ensure_backend()
    system_info = llama_cpp.llama_print_system_info().decode("utf-8", errors="replace")
    return {
        "llama_cpp_python": llama_cpp.__version__,
        "gpu_offload": bool(llama_cpp.llama_supports_gpu_offload()),
        "max_devices": int(llama_cpp.llama_max_devices()),
        "mmap": bool(llama_cpp.llama_supports_mmap()),
        "mlock": bool(llama_cpp.llama_supports_mlock()),
        "rpc": bool(llama_cpp.llama_supports_rpc()),
        "system_info": system_info.strip(),
        "cpu_features": sorted(re.findall(r"(\w+) = 1", system_info)),
    }
