"""Quire's engine: PDF ingestion, the catalog, retrieval and cited synthesis.

Pure Python; never imports Qt. The CLI, the tests and the desktop UI all use it through
:class:`engine.service.Engine`.
"""

from __future__ import annotations

import os
import sys

__version__ = "0.1.0"

# ONNX Runtime's opt-outs of its telemetry: 1.32 reads the first, newer sources name the second.
_ONNX_RUNTIME_OPT_OUTS = ("ORT_DISABLE_TELEMETRY", "ORT_TELEMETRY_DISABLED")


def keep_onnx_runtime_offline() -> None:
    """Switch ONNX Runtime's telemetry off; it must run before ``onnxruntime`` creates its environment.

    The official ONNX Runtime wheels for Linux and macOS (1.32) ship Microsoft's 1DS telemetry:
    seconds after the first inference session its native threads look up
    ``mobile.events.data.microsoft.com``, again and again, and it writes a device id and an event
    queue under ``~/.cache/Microsoft/DeveloperTools``. Quire loads ONNX Runtime for its int8
    embedder, and PyMuPDF 2 loads it at ``import pymupdf`` (its pymupdf-layout model), so every
    process that reads a PDF would report home. ``onnxruntime.disable_telemetry_events()`` only
    drops "non-essential" events: the uploader still starts and still looks the host up. The
    environment variable is the opt-out that creates no uploader, id or queue at all. Forced, not
    defaulted (Quire promises never to reach the network), and inherited by the parse workers.
    ``tests/trust/test_offline_native.py`` checks it at the system-call level.
    """
    for name in _ONNX_RUNTIME_OPT_OUTS:
        os.environ[name] = "1"


def skip_pymupdf_layout() -> None:
    """Keep ``import pymupdf`` from loading the pymupdf-layout package PyMuPDF 2 installs with it.

    When that package is importable, ``import pymupdf`` imports it, and it builds ONNX Runtime
    sessions for its layout and table models at once: about half a second and a few hundred MB
    in every process that reads a PDF (each parse worker, the app), for models Quire never calls
    (it reads pages through ``get_text`` and its own layout code, engine/ingest). A ``None`` entry
    in ``sys.modules`` makes that import fail as if the package were absent, which PyMuPDF handles;
    the environment variable stops it suggesting the package instead.
    """
    sys.modules.setdefault("pymupdf.layout", None)  # type: ignore[arg-type]
    os.environ.setdefault("PYMUPDF_SUGGEST_LAYOUT_ANALYZER", "0")


def _warn_if_onnx_runtime_came_first() -> None:
    """Say so when ONNX Runtime was loaded before the engine: its uploader has started, too late to stop.

    ``ui`` and ``desktop`` import the engine before anything else, so in Quire's own processes this
    never fires; a script that imports onnxruntime (or PyMuPDF) before the engine learns how to fix it.
    """
    if "onnxruntime" in sys.modules and not _TELEMETRY_OFF_AT_START:
        import logging

        logging.getLogger(__name__).warning(
            "onnxruntime was imported before Quire's engine, so its telemetry could not be switched off in this "
            "process; import engine first, or set ORT_DISABLE_TELEMETRY=1 in the environment.")


# Whether the opt-out was already in the environment when this process started (a parent set it).
_TELEMETRY_OFF_AT_START = os.environ.get(_ONNX_RUNTIME_OPT_OUTS[0]) == "1"

# Here, at the first import of anything in the engine: before any of it can import PyMuPDF or
# ONNX Runtime (ui/ and desktop/ import the engine before anything else of theirs).
_warn_if_onnx_runtime_came_first()
keep_onnx_runtime_offline()
skip_pymupdf_layout()
