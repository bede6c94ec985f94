"""Hardware detection, memory estimates checked against llama.cpp's own figures, recommendations."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from engine.hardware import GPUInfo, HardwareInfo, detect_hardware, parse_cpuinfo, parse_meminfo, parse_nvidia_smi
from engine.manager.catalog import load_catalog
from engine.manager.fit import (
    BUNDLED_MODEL,
    check_fit,
    compute_buffer_bytes,
    estimate_memory,
    fit_for_file,
    kv_cache_bytes,
    recommend,
    shape_from_catalog,
    shape_from_gguf,
)
from engine.models import default_lm_path

GB = 1024**3
MEMINFO = "MemTotal:       16318480 kB\nMemFree:         1200000 kB\nMemAvailable:    9876544 kB\nCached: 100 kB\n"
CPUINFO_X86 = "\n\n".join(
    f"processor\t: {n}\nmodel name\t: Intel(R) Core(TM) i7-8650U\nphysical id\t: 0\ncore id\t\t: {n % 4}\n"
    "flags\t\t: fpu pni ssse3 fma avx avx2 f16c" for n in range(8))
CPUINFO_ARM = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes crc32 asimddp\n\nprocessor\t: 1\nFeatures\t: fp asimd"


def machine(ram_gb: float, cores: int = 8, vram_gb: float = 0, offload: bool | None = False) -> HardwareInfo:
    gpus = (GPUInfo("Test GPU", int(vram_gb * GB), int(vram_gb * GB), "nvidia-smi"),) if vram_gb else ()
    return HardwareInfo(os="Linux", machine="x86_64", cpu_model="test", logical_cores=cores * 2,
                        physical_cores=cores, cpu_features=("avx", "avx2", "fma"), ram_total_bytes=int(ram_gb * GB),
                        ram_available_bytes=int(ram_gb * 0.8 * GB), gpu_offload=offload, gpus=gpus)


def test_meminfo_and_cpuinfo_parsing() -> None:
    assert parse_meminfo(MEMINFO) == (16318480 * 1024, 9876544 * 1024)
    model, physical, features = parse_cpuinfo(CPUINFO_X86)
    assert model.startswith("Intel") and physical == 4, "8 hyper-threads on 4 cores"
    assert {"sse3", "avx2", "fma", "f16c"} <= set(features) and "avx512f" not in features
    assert parse_cpuinfo(CPUINFO_ARM)[2] == ("asimd", "asimddp")


def test_nvidia_smi_output_parsing() -> None:
    gpus = parse_nvidia_smi("NVIDIA GeForce RTX 4090, 24564, 23012\nNVIDIA A100-SXM4-80GB, 81920, 81000\n")
    assert [gpu.name for gpu in gpus] == ["NVIDIA GeForce RTX 4090", "NVIDIA A100-SXM4-80GB"]
    assert gpus[0].vram_total_bytes == 24564 * 1024 * 1024 and gpus[1].vram_free_bytes == 81000 * 1024 * 1024
    assert parse_nvidia_smi("NVIDIA-SMI has failed because it couldn't communicate with the driver") == ()


def test_this_machine_is_detected() -> None:
    hardware = detect_hardware()
    assert hardware.ram_total_bytes > hardware.ram_available_bytes > 0
    assert hardware.logical_cores >= hardware.physical_cores >= 1
    assert hardware.gpu_offload in (True, False)  # llama.cpp is installed, so it answers
    if not hardware.gpu_offload:
        assert hardware.vram_free_bytes == 0
    assert "gpu_offload" in hardware.to_dict()


@pytest.fixture(scope="module")
def llama_report() -> dict[int, tuple[float, float]]:
    """What llama.cpp itself reports for the bundled model: {n_ctx: (KV MiB, compute MiB)}."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from engine.generate.backend import capture_llama_log

    path = default_lm_path()
    if path is None:
        pytest.skip("the bundled SmolLM2 is not installed")
    figures = {}
    for n_ctx in (1024, 4096):
        with capture_llama_log() as log:
            model = llama_cpp.Llama(str(path), n_ctx=n_ctx, n_threads=1, verbose=True)
        text = "\n".join(log.lines)
        model.close()
        kv = float(re.search(r"llama_kv_cache: size =\s+([\d.]+) MiB", text).group(1))
        compute = float(re.search(r"CPU compute buffer size =\s+([\d.]+) MiB", text).group(1))
        figures[n_ctx] = (kv, compute)
    return figures


def test_kv_cache_estimate_equals_what_llama_cpp_allocates(llama_report: dict[int, tuple[float, float]]) -> None:
    from engine.generate.gguf import read_gguf

    shape = shape_from_gguf(read_gguf(default_lm_path()))
    assert (shape.n_layers, shape.n_kv_heads, shape.head_dim_k, shape.n_vocab) == (30, 3, 64, 49152)
    for n_ctx, (kv_mib, compute_mib) in llama_report.items():
        assert kv_cache_bytes(shape, n_ctx) / 2**20 == pytest.approx(kv_mib, abs=0.01)
        assert compute_buffer_bytes(shape, n_ctx) / 2**20 == pytest.approx(compute_mib, rel=0.15)


def test_catalog_shapes_give_the_known_kv_cache_sizes() -> None:
    catalog = {entry.name: entry for entry in load_catalog()}
    # Llama 3.1 8B at 8k context: 32 layers x 8 KV heads x 128 x 2 (K,V) x 2 bytes = 1 GiB.
    assert kv_cache_bytes(shape_from_catalog(catalog["llama-3.1-8b-instruct"]), 8192) == GB
    # Qwen2.5 7B has 4 KV heads over 28 layers: 448 MiB; Phi-3.5 mini has no GQA: 3 GiB.
    assert kv_cache_bytes(shape_from_catalog(catalog["qwen2.5-7b-instruct"]), 8192) == 448 * 2**20
    assert kv_cache_bytes(shape_from_catalog(catalog["phi-3.5-mini-instruct"]), 8192) == 3 * GB


def test_a_model_that_will_not_fit_gets_a_warning() -> None:
    catalog = {entry.name: entry for entry in load_catalog()}
    entry = catalog["llama-3.1-8b-instruct"]
    estimate = estimate_memory(entry.size_estimate, shape_from_catalog(entry), 32768)
    report = check_fit(estimate, machine(ram_gb=8), label=entry.title)
    assert not report.fits
    assert "context of 32,768 tokens" in report.warning and "KV cache 4.0 GB" in report.warning
    assert "Lower generation.context_size" in report.warning
    assert check_fit(estimate_memory(entry.size_estimate, shape_from_catalog(entry), 4096), machine(32)).fits


def test_fit_for_an_installed_gguf_uses_its_header(tmp_path: Path) -> None:
    report = fit_for_file(default_lm_path(), 2048, machine(ram_gb=4))
    assert report.fits and report.estimate.kv_cache_bytes == 30 * 2048 * 3 * 128 * 2
    tiny = replace(machine(ram_gb=4), ram_available_bytes=100 * 2**20)
    assert not fit_for_file(default_lm_path(), 8192, tiny).fits


@pytest.mark.parametrize(("hardware", "model", "context", "gpu_layers"), [
    (machine(ram_gb=4, cores=2), BUNDLED_MODEL, 2048, 0),  # nothing fits with 4k: keep the bundled model
    (machine(ram_gb=8, cores=2), "phi-3.5-mini-instruct", 4096, 0),  # few cores: smallest model first
    (machine(ram_gb=16, cores=8), "llama-3.1-8b-instruct", 8192, 0),  # CPU: context capped at 8k
    (machine(ram_gb=32, cores=8, vram_gb=24, offload=True), "llama-3.1-8b-instruct", 32768, -1),
    (machine(ram_gb=32, cores=8, vram_gb=24, offload=False), "llama-3.1-8b-instruct", 8192, 0),  # CPU build
    (machine(ram_gb=16, cores=8, vram_gb=4, offload=True), "llama-3.1-8b-instruct", 8192, 0),  # GPU too small
])
def test_recommendations(hardware: HardwareInfo, model: str, context: int, gpu_layers: int) -> None:
    recommendation = recommend(hardware, load_catalog())
    assert (recommendation.model, recommendation.context_size, recommendation.gpu_layers) == (model, context,
                                                                                               gpu_layers)
    assert recommendation.threads == hardware.physical_cores and recommendation.reasons


def test_a_broken_model_file_in_the_settings_is_reported_not_raised(tmp_path: Path) -> None:
    """The Models dialog gathers this report: a damaged model named in settings.toml must not stop it."""
    from engine.config import Settings
    from engine.manager.setup import hardware_report

    broken = tmp_path / "broken.gguf"
    broken.write_text("not a model")
    settings = Settings()
    settings = replace(settings, generation=replace(settings.generation, model=str(broken)))
    report = hardware_report(machine(16), settings, tmp_path)
    assert report["configured_fit"] is None
    assert report["configured_problem"].startswith("Model file ")
    assert report["recommendation"]["title"]
