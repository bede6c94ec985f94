"""Vector search over passage ids: FAISS behind an interface, saved atomically, rebuilt when damaged.

``FlatIndex`` (exact) serves collections up to ``FLAT_LIMIT`` vectors and ``IVFIndex`` (IVF-SQ8)
larger ones; :func:`open_or_rebuild` loads a saved index or rebuilds it from cached embeddings.
"""

from __future__ import annotations

from engine.index.build import FLAT_LIMIT, build_index, choose_kind, open_or_rebuild, should_rebuild
from engine.index.faiss_index import FaissIndex, FlatIndex, Hit, IVFIndex, VectorIndex
from engine.index.ids import passage_key
from engine.index.storage import IndexHeader, load_index, read_header, save_index

__all__ = [
    "FLAT_LIMIT",
    "FaissIndex",
    "FlatIndex",
    "Hit",
    "IVFIndex",
    "IndexHeader",
    "VectorIndex",
    "build_index",
    "choose_kind",
    "load_index",
    "open_or_rebuild",
    "passage_key",
    "read_header",
    "save_index",
    "should_rebuild",
]
