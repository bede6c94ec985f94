"""Quire's engine: PDF ingestion, the catalog, retrieval and cited synthesis.

Pure Python; never imports Qt. The CLI, the tests and the desktop UI all use it through
:class:`engine.service.Engine`.
"""

from __future__ import annotations

__version__ = "0.1.0"
