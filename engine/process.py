"""The process-wide settings Quire's own programs start with: the CLI, the desktop app, benchmarks.

Importing the engine changes no environment variable; a program that runs Quire calls
:func:`prepare_process` first thing, before it imports anything that could load llama.cpp,
ONNX Runtime or the Hugging Face hub client (each reads its variable once, when it loads).
"""

from __future__ import annotations

import os
import sys

# ONNX Runtime's opt-outs of its telemetry: 1.32 reads the first, newer sources name the second.
ONNX_RUNTIME_OPT_OUTS = ("ORT_DISABLE_TELEMETRY", "ORT_TELEMETRY_DISABLED")

# Whether ONNX Runtime was already loaded, without its opt-out, when this module was first imported.
# That is at ``import engine`` (engine/__init__.py imports this module before anything else): the runtime
# creates its environment, and with it the telemetry uploader, when it is imported, and reads the opt-out
# only then, so in such a process the uploader runs whatever is set later, and nothing can stop it.
_TELEMETRY_LIVE = "onnxruntime" in sys.modules and os.environ.get(ONNX_RUNTIME_OPT_OUTS[0]) != "1"

ONNX_RUNTIME_CAME_FIRST = (
    "onnxruntime was imported before Quire's engine, so its telemetry could not be switched off in this "
    "process; import engine first, or set ORT_DISABLE_TELEMETRY=1 in the environment before Python starts.")


def keep_onnx_runtime_offline() -> None:
    """Switch ONNX Runtime's telemetry off; it must run before ``onnxruntime`` creates its environment.

    The official ONNX Runtime wheels for Linux and macOS (1.32) ship Microsoft's 1DS telemetry:
    seconds after the first inference session its native threads look up
    ``mobile.events.data.microsoft.com``, again and again, and it writes a device id and an event
    queue under ``~/.cache/Microsoft/DeveloperTools``. ``onnxruntime.disable_telemetry_events()``
    only drops "non-essential" events: the uploader still starts and still looks the host up. The
    environment variable is the opt-out that creates no uploader, id or queue at all. Forced, not
    defaulted (Quire promises never to reach the network), and inherited by the parse workers.
    ``tests/trust/test_offline_native.py`` checks it at the system-call level.
    """
    for name in ONNX_RUNTIME_OPT_OUTS:
        os.environ[name] = "1"


def onnx_runtime_telemetry_live() -> bool:
    """Whether ONNX Runtime's telemetry uploader runs in this process (the runtime came before the engine).

    Quire then runs none of its models on the runtime (each refuses with :data:`ONNX_RUNTIME_CAME_FIRST`):
    the uploader reports every inference session a process opens, and Quire promises its work never
    reaches the network. ``onnxruntime.disable_telemetry_events()`` does not help: measured, the uploader
    still looks its host up (docs/reliability.md).
    """
    return _TELEMETRY_LIVE


def prepare_process() -> None:
    """Set what Quire's programs need before their libraries load; values the user exported win
    (except the telemetry opt-out, which is forced)."""
    keep_onnx_runtime_offline()
    # Models are read from files Quire ships or the user chose: the hub client (tokenizer, config
    # helpers) must not ask for updates. The loaders also pass local_files_only; this covers helpers.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # llama.cpp's CPU backend runs on OpenMP, whose worker threads spin while they wait. On a desktop
    # where other work shares the cores, spinning threads starve each other: measured with 2 threads
    # on a busy 2-core machine, 0.6-2 tokens/s spinning against ~20 tokens/s passive. libgomp reads
    # this when llama.cpp's library loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
