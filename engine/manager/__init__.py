"""Models and datastores the user downloads: catalog, downloads, installed items, hardware fit.

``engine.manager.download.download`` is the one function that fetches anything over the network.
"""

from __future__ import annotations

from engine.manager.download import download, ensure_free_space, hf_endpoint, hf_url, partial_path

__all__ = ["download", "ensure_free_space", "hf_endpoint", "hf_url", "partial_path"]
