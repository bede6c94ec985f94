"""What this machine can run: RAM, CPU cores and features, GPUs and what llama.cpp can offload.

Detection reads the operating system directly (``/proc`` on Linux, ``sysctl`` on macOS, the
Win32 API on Windows), asks the installed llama.cpp whether its build offloads to a GPU (CUDA,
Metal, Vulkan builds do; the default PyPI wheel does not), and runs ``nvidia-smi`` when present
for VRAM. Every probe is optional: a missing tool gives an empty field, never an error.
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# The instruction-set extensions llama.cpp's CPU kernels care about, as /proc/cpuinfo names them.
LLAMA_CPU_FEATURES = ("sse3", "ssse3", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni",
                      "avx_vnni", "amx_int8", "asimd", "fphp", "asimddp", "sve", "i8mm")
_MIB = 1024 * 1024


@dataclass(frozen=True)
class GPUInfo:
    name: str
    vram_total_bytes: int
    vram_free_bytes: int
    source: str  # "nvidia-smi", "unified memory (Metal)"


@dataclass(frozen=True)
class HardwareInfo:
    os: str
    machine: str
    cpu_model: str
    logical_cores: int
    physical_cores: int
    cpu_features: tuple[str, ...]
    ram_total_bytes: int
    ram_available_bytes: int
    gpu_offload: bool | None  # what llama.cpp says; None when llama.cpp could not be asked
    gpus: tuple[GPUInfo, ...] = ()
    llama: dict[str, Any] = field(default_factory=dict)

    @property
    def vram_free_bytes(self) -> int:
        """GPU memory llama.cpp could use now (0 when it cannot offload)."""
        if not self.gpu_offload:
            return 0
        return max((gpu.vram_free_bytes for gpu in self.gpus), default=0)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["vram_free_bytes"] = self.vram_free_bytes
        return data


def parse_meminfo(text: str) -> tuple[int, int]:
    """(total, available) bytes from /proc/meminfo text."""
    values = {match.group(1): int(match.group(2)) * 1024
              for match in re.finditer(r"^(\w+):\s+(\d+) kB", text, re.MULTILINE)}
    total = values.get("MemTotal", 0)
    available = values.get("MemAvailable", values.get("MemFree", 0) + values.get("Cached", 0))
    return total, available


def parse_cpuinfo(text: str) -> tuple[str, int, tuple[str, ...]]:
    """(model name, physical cores, llama.cpp-relevant features) from /proc/cpuinfo text."""
    model = ""
    cores: set[tuple[str, str]] = set()
    flags: set[str] = set()
    for block in text.split("\n\n"):
        fields = dict(line.split(":", 1) for line in block.splitlines() if ":" in line)
        fields = {key.strip(): value.strip() for key, value in fields.items()}
        model = model or fields.get("model name", "") or fields.get("Hardware", "")
        if "core id" in fields:
            cores.add((fields.get("physical id", "0"), fields["core id"]))
        flags.update((fields.get("flags") or fields.get("Features") or "").split())
    if "pni" in flags:  # Linux calls SSE3 "pni" (Prescott New Instructions)
        flags.add("sse3")
    features = tuple(name for name in LLAMA_CPU_FEATURES if name in flags)
    return model, len(cores), features


def _cgroup_memory_limit() -> int:
    """A container's memory limit (cgroup v2 or v1), or 0 when there is none."""
    for candidate in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            value = Path(candidate).read_text().strip()
        except OSError:
            continue
        if value.isdigit() and int(value) < 1 << 60:
            return int(value)
    return 0


def _memory() -> tuple[int, int]:
    if sys.platform.startswith("linux"):
        try:
            total, available = parse_meminfo(Path("/proc/meminfo").read_text())
        except OSError:
            total = available = 0
        limit = _cgroup_memory_limit()
        if limit:
            total, available = min(total, limit), min(available, limit)
        if total:
            return total, available
    if sys.platform == "darwin":
        total = int(_sysctl("hw.memsize") or 0)
        return total, int(total * 0.7)  # macOS keeps file cache in "used"; be conservative
    if sys.platform == "win32":
        return _windows_memory()
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return total, int(total * 0.7)
    except (ValueError, OSError, AttributeError):
        return 0, 0


def _windows_memory() -> tuple[int, int]:
    class MemoryStatus(ctypes.Structure):
        _fields_ = [("length", ctypes.c_ulong), ("load", ctypes.c_ulong), ("total", ctypes.c_ulonglong),
                    ("available", ctypes.c_ulonglong), ("page_total", ctypes.c_ulonglong),
                    ("page_available", ctypes.c_ulonglong), ("virtual_total", ctypes.c_ulonglong),
                    ("virtual_available", ctypes.c_ulonglong), ("extended", ctypes.c_ulonglong)]

    status = MemoryStatus()
    status.length = ctypes.sizeof(MemoryStatus)
    if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined]
        return int(status.total), int(status.available)
    return 0, 0


def _sysctl(name: str) -> str:
    try:
        return subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5,
                              check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _cpu() -> tuple[str, int, tuple[str, ...]]:
    if sys.platform.startswith("linux"):
        try:
            model, physical, features = parse_cpuinfo(Path("/proc/cpuinfo").read_text())
        except OSError:
            model, physical, features = "", 0, ()
        return model or platform.processor(), physical, features
    if sys.platform == "darwin":
        flags = f"{_sysctl('machdep.cpu.features')} {_sysctl('machdep.cpu.leaf7_features')}".lower().split()
        features = tuple(name for name in LLAMA_CPU_FEATURES if name in flags)
        if platform.machine() == "arm64":
            features = ("asimd", "fphp", "asimddp")  # every Apple silicon core has NEON with fp16 and dot product
        physical = int(_sysctl("hw.physicalcpu") or 0)
        return _sysctl("machdep.cpu.brand_string") or platform.processor(), physical, features
    return platform.processor(), 0, ()


def parse_nvidia_smi(text: str) -> tuple[GPUInfo, ...]:
    """GPUs from ``nvidia-smi --query-gpu=name,memory.total,memory.free --format=csv,noheader,nounits``."""
    gpus = []
    for line in text.strip().splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            gpus.append(GPUInfo(parts[0], int(parts[1]) * _MIB, int(parts[2]) * _MIB, "nvidia-smi"))
    return tuple(gpus)


def _nvidia_gpus() -> tuple[GPUInfo, ...]:
    executable = shutil.which("nvidia-smi")
    if not executable:
        return ()
    try:
        result = subprocess.run([executable, "--query-gpu=name,memory.total,memory.free",
                                 "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("nvidia-smi did not answer: %s", exc)
        return ()
    return parse_nvidia_smi(result.stdout) if result.returncode == 0 else ()


def _llama_backend() -> dict[str, Any]:
    try:
        from engine.generate.backend import llama_backend_info
        return llama_backend_info()
    except Exception as exc:  # an absent or broken llama.cpp must not break hardware detection
        log.info("llama.cpp could not report its backend: %s", exc)
        return {}


def detect_hardware() -> HardwareInfo:
    """Probe this machine (a second or so: it asks llama.cpp and, if present, nvidia-smi)."""
    total, available = _memory()
    model, physical, features = _cpu()
    logical = os.cpu_count() or 1
    llama = _llama_backend()
    gpu_offload = llama.get("gpu_offload") if llama else None
    gpus = _nvidia_gpus()
    if not gpus and sys.platform == "darwin" and platform.machine() == "arm64" and gpu_offload:
        # Metal shares memory with the CPU; macOS lets the GPU wire about two thirds of it.
        gpus = (GPUInfo("Apple GPU (Metal)", int(total * 2 / 3), int(available * 2 / 3), "unified memory (Metal)"),)
    if llama and not features:
        features = tuple(name.lower() for name in llama.get("cpu_features", ()))
    return HardwareInfo(os=f"{platform.system()} {platform.release()}", machine=platform.machine(),
                        cpu_model=model, logical_cores=logical, physical_cores=physical or logical,
                        cpu_features=features, ram_total_bytes=total, ram_available_bytes=available,
                        gpu_offload=gpu_offload, gpus=gpus, llama=llama)
