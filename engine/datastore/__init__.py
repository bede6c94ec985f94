"""Attached scholarly datastores: peS2o-style JSON lines imported into their own SQLite and index.

Each datastore lives in ``<home>/datastores/<name>/`` with its own SQLite file (records,
passages, FTS5) and vector index, and is searched through the same ``PassageSource`` protocol as
the library. Packs (``pack.py``) carry a built datastore between machines; ``server/`` publishes one to a
PostgreSQL + pgvector server and searches it there, for a lab that shares one corpus.
"""

from __future__ import annotations
