"""Quire's engine: PDF ingestion, the catalog, retrieval and cited synthesis.

Pure Python; never imports Qt. The CLI, the tests and the desktop UI all use it through
:class:`engine.service.Engine`. Quire's programs set the process's environment when they start
(:func:`engine.process.prepare_process`); importing the engine sets one variable only, ONNX Runtime's
telemetry opt-out, because any Quire module may be a process's first and ``import pymupdf`` loads
ONNX Runtime (through pymupdf4llm), whose uploader starts at once unless the variable is already set.
"""

from __future__ import annotations

import sys

from engine.process import ONNX_RUNTIME_CAME_FIRST, keep_onnx_runtime_offline, onnx_runtime_telemetry_live

__version__ = "0.1.0"


def skip_pymupdf_layout() -> None:
    """Keep ``import pymupdf`` from loading the pymupdf-layout package PyMuPDF 2 installs with it.

    When that package is importable, ``import pymupdf`` imports it, and it builds ONNX Runtime
    sessions for its layout and table models at once: about half a second and a few hundred MB
    in every process that reads a PDF (each parse worker, the app), for models Quire never calls
    (it reads pages through ``get_text`` and its own layout code, engine/ingest), and ONNX Runtime's
    telemetry uploader with them. A ``None`` entry in ``sys.modules`` makes that import fail as if the
    package were absent, which PyMuPDF handles (it would only suggest the package from
    ``find_tables``, which Quire does not call). Here, at import, because any Quire module may be a
    process's first and may import PyMuPDF: unlike a variable, this reaches no child process and no
    other library.
    """
    sys.modules.setdefault("pymupdf.layout", None)  # type: ignore[arg-type]


def _warn_if_onnx_runtime_came_first() -> None:
    """Say so when ONNX Runtime was loaded before the engine without the opt-out: its uploader has started.

    ``ui`` and ``desktop`` import the engine before anything else, so in Quire's own processes this
    never fires; a script that imports onnxruntime (or PyMuPDF) before the engine learns how to fix it,
    and that Quire's models will not run in it (engine.process.onnx_runtime_telemetry_live).
    """
    if onnx_runtime_telemetry_live():
        import logging

        logging.getLogger(__name__).warning(
            "%s Until then Quire runs none of its models in this process: search finds passages by their words "
            "only, and questions are not answered.", ONNX_RUNTIME_CAME_FIRST)

# Before any of the engine can import PyMuPDF (ui/ and desktop/ import the engine before anything else of theirs).
_warn_if_onnx_runtime_came_first()
keep_onnx_runtime_offline()
skip_pymupdf_layout()
