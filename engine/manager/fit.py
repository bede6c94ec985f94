"""Will a model fit? Memory estimates from GGUF metadata, and a recommendation for this machine.

llama.cpp needs, beside the weights (about the GGUF's size, memory-mapped), a KV cache of
``layers × context × KV heads × (K + V head size) × 2 bytes (f16)`` and a compute buffer: the
largest intermediate of one 512-token micro-batch, which is either the attention scores
(micro-batch × context × heads, f32) or the logits (micro-batch × vocabulary, f32) - the graph
allocator reuses memory between them. Tests check both against the sizes llama.cpp reports.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.hardware import HardwareInfo
from engine.manager.catalog import CatalogModel
from engine.progress import human_size

if TYPE_CHECKING:
    from engine.generate.gguf import GGUFInfo

KV_BYTES_PER_VALUE = 2  # llama.cpp's default f16 cache
UBATCH = 512  # llama.cpp's default micro-batch, which sizes the compute buffer
OVERHEAD_BYTES = 256 * 1024 * 1024  # runtime, tokenizer, output buffers, the Python side
RAM_HEADROOM = 0.85  # never plan to use more than this share of the memory that is free
CONTEXT_STEPS = (32768, 16384, 8192, 4096, 2048)
CPU_CONTEXT_CAP = 8192  # on a CPU, reading a longer prompt takes minutes; more context rarely pays
FEW_CORES = 4  # below this many physical cores an 8B model writes only a couple of tokens a second
BUNDLED_MODEL = "SmolLM2-135M-Instruct (bundled)"


@dataclass(frozen=True)
class ModelShape:
    """The numbers that size a model's KV cache and compute buffer."""

    n_layers: int
    n_kv_heads: int
    head_dim_k: int
    head_dim_v: int
    n_heads: int
    context_length: int  # trained context, 0 if unknown
    n_vocab: int = 0


@dataclass(frozen=True)
class MemoryEstimate:
    weights_bytes: int
    kv_cache_bytes: int
    compute_bytes: int
    context_size: int

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.kv_cache_bytes + self.compute_bytes + OVERHEAD_BYTES


@dataclass(frozen=True)
class FitReport:
    """Whether a model at a context size fits the memory it would run in."""

    fits: bool
    estimate: MemoryEstimate
    available_bytes: int
    where: str  # "RAM" or "GPU memory"
    warning: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["estimate"]["total_bytes"] = self.estimate.total_bytes
        return data


def shape_from_gguf(info: GGUFInfo) -> ModelShape:
    """Read the attention shape from a GGUF header (``<arch>.block_count`` and friends)."""
    metadata, arch = info.metadata, info.architecture

    def number(key: str, default: int = 0) -> int:
        value = metadata.get(f"{arch}.{key}", default)
        if isinstance(value, list):  # per-layer values (e.g. varying KV heads): size for the largest
            value = max((item for item in value if isinstance(item, int)), default=default)
        return int(value) if isinstance(value, int) else default

    n_heads = number("attention.head_count", 1) or 1
    embedding = number("embedding_length")
    tokens = metadata.get("tokenizer.ggml.tokens")
    listed = len(tokens) if isinstance(tokens, list) else int(getattr(tokens, "length", 0))
    n_vocab = number("vocab_size") or listed
    head_k = number("attention.key_length", embedding // n_heads)
    head_v = number("attention.value_length", head_k)
    return ModelShape(n_layers=number("block_count"), n_kv_heads=number("attention.head_count_kv", n_heads),
                      head_dim_k=head_k, head_dim_v=head_v, n_heads=n_heads,
                      context_length=number("context_length"), n_vocab=n_vocab)


def shape_from_catalog(entry: CatalogModel) -> ModelShape:
    return ModelShape(n_layers=entry.n_layers, n_kv_heads=entry.n_kv_heads, head_dim_k=entry.head_dim,
                      head_dim_v=entry.head_dim, n_heads=entry.n_heads or entry.n_kv_heads,
                      context_length=entry.context_length, n_vocab=entry.vocab_size)


def kv_cache_bytes(shape: ModelShape, context_size: int, bytes_per_value: int = KV_BYTES_PER_VALUE) -> int:
    """Bytes of llama.cpp's K and V cache for ``context_size`` tokens."""
    return shape.n_layers * context_size * shape.n_kv_heads * (shape.head_dim_k + shape.head_dim_v) * bytes_per_value


def compute_buffer_bytes(shape: ModelShape, context_size: int) -> int:
    """The compute buffer: the larger of a micro-batch's attention scores and its logits (f32), plus 5 %."""
    ubatch = min(UBATCH, context_size)
    attention = ubatch * context_size * max(shape.n_heads, shape.n_kv_heads) * 4
    logits = ubatch * shape.n_vocab * 4
    return int(max(attention, logits) * 1.05)


def estimate_memory(weights_bytes: int, shape: ModelShape, context_size: int) -> MemoryEstimate:
    return MemoryEstimate(weights_bytes=weights_bytes, kv_cache_bytes=kv_cache_bytes(shape, context_size),
                          compute_bytes=compute_buffer_bytes(shape, context_size), context_size=context_size)


def _budget(hardware: HardwareInfo, gpu_layers: int) -> tuple[int, str]:
    if gpu_layers != 0 and hardware.vram_free_bytes:
        return int(hardware.vram_free_bytes * RAM_HEADROOM), "GPU memory"
    return int(hardware.ram_available_bytes * RAM_HEADROOM), "RAM"


def check_fit(estimate: MemoryEstimate, hardware: HardwareInfo, gpu_layers: int = 0, label: str = "") -> FitReport:
    """Compare an estimate with the memory this machine has free; phrase a warning when it will not fit."""
    available, where = _budget(hardware, gpu_layers)
    if estimate.total_bytes <= available:
        return FitReport(True, estimate, available, where)
    what = label or "This model"
    warning = (f"{what} with a context of {estimate.context_size:,} tokens needs about "
               f"{human_size(estimate.total_bytes)} "
               f"(weights {human_size(estimate.weights_bytes)}, KV cache {human_size(estimate.kv_cache_bytes)}, "
               f"compute {human_size(estimate.compute_bytes)}) but only {human_size(available)} of {where} is free. "
               f"Lower generation.context_size, close other programs, or choose a smaller model.")
    return FitReport(False, estimate, available, where, warning)


def fit_for_file(path: str | Path, context_size: int, hardware: HardwareInfo, gpu_layers: int = 0) -> FitReport:
    """:func:`check_fit` for an installed GGUF, using its own header."""
    from engine.generate.gguf import read_gguf

    info = read_gguf(path)
    estimate = estimate_memory(info.file_size, shape_from_gguf(info), context_size)
    return check_fit(estimate, hardware, gpu_layers, info.name)


@dataclass(frozen=True)
class Recommendation:
    """What to run on this machine, and why."""

    model: str  # a catalog name, or the bundled model
    title: str
    parameters_b: float
    quantization: str
    context_size: int
    gpu_layers: int  # llama.cpp n_gpu_layers: 0 = CPU only, -1 = all layers
    threads: int
    estimate_bytes: int
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def recommend(hardware: HardwareInfo, catalog: list[CatalogModel]) -> Recommendation:
    """The largest catalog language model that fits with a useful context, and its settings.

    Models are tried from the largest down; for each, the longest context in :data:`CONTEXT_STEPS`
    (up to the model's trained length) that fits is taken, and 8k tokens is required before a
    smaller model is preferred, since literature answers carry many passages.
    """
    gpu = bool(hardware.gpu_offload and hardware.vram_free_bytes)
    budget, where = _budget(hardware, -1 if gpu else 0)
    threads = hardware.physical_cores or hardware.logical_cores
    few_cores = not gpu and threads < FEW_CORES
    # Largest first; with few CPU cores and no GPU, smallest first, because speed is what runs out.
    candidates = sorted((entry for entry in catalog if entry.kind == "llm" and entry.n_layers),
                        key=lambda entry: entry.parameters_b, reverse=not few_cores)
    for minimum_context in (8192, 4096):
        for entry in candidates:
            shape = shape_from_catalog(entry)
            for context in CONTEXT_STEPS:
                if context < minimum_context or (entry.context_length and context > entry.context_length):
                    continue
                if not gpu and context > CPU_CONTEXT_CAP:
                    continue
                estimate = estimate_memory(entry.size_estimate, shape, context)
                if estimate.total_bytes <= budget:
                    return _recommendation(entry, estimate, hardware, where, gpu, threads)
    # Nothing fits fully on the GPU: try partial offload, then fall back to the bundled model.
    if gpu:
        cpu_only = HardwareInfo(**{**hardware.__dict__, "gpu_offload": False})
        return recommend(cpu_only, catalog)
    return Recommendation(BUNDLED_MODEL, BUNDLED_MODEL, 0.135, "Q4_1", 2048, 0, threads, 0, (
        f"Only {human_size(budget)} of {where} is free: no catalog model fits with a 4k context, so keep the "
        "bundled model (answers will be rough) or free memory and check again.",))


def _recommendation(entry: CatalogModel, estimate: MemoryEstimate, hardware: HardwareInfo, where: str,
                    gpu: bool, threads: int) -> Recommendation:
    reasons = [f"{entry.title} needs about {human_size(estimate.total_bytes)} with a "
               f"context of {estimate.context_size:,} tokens; {human_size(hardware.ram_available_bytes)} RAM is free."]
    if gpu:
        reasons.append(f"llama.cpp can offload to the GPU and {human_size(hardware.vram_free_bytes)} is free there, "
                       "so every layer goes to the GPU (n_gpu_layers = -1).")
    elif hardware.gpu_offload is False:
        reasons.append("The installed llama.cpp is a CPU build (no GPU offload), so n_gpu_layers = 0; install a "
                       "CUDA, Metal or Vulkan build of llama-cpp-python to use a GPU.")
    if not gpu and threads < FEW_CORES:
        reasons.append(f"Only {threads} physical cores and no GPU: the smallest recommended model keeps answers "
                       "coming at a readable pace (an 8B model would write about two tokens a second).")
    if not gpu and estimate.context_size >= CPU_CONTEXT_CAP:
        reasons.append(f"Context capped at {CPU_CONTEXT_CAP:,} tokens on a CPU: reading longer prompts takes minutes.")
    if "avx2" not in hardware.cpu_features and "asimd" not in hardware.cpu_features:
        reasons.append("This CPU lacks AVX2/NEON, so generation will be slow; prefer a smaller model.")
    bits_per_weight = entry.size_estimate * 8 / (max(entry.parameters_b, 0.1) * 1e9)
    reasons.append(f"{entry.quantization} stores about {bits_per_weight:.1f} bits per weight, close to 8-bit quality "
                   f"at half the memory; use {threads} threads (one per physical core).")
    return Recommendation(entry.name, entry.title, entry.parameters_b, entry.quantization, estimate.context_size,
                          -1 if gpu else 0, threads, estimate.total_bytes, tuple(reasons))
