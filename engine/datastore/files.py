"""The files of one datastore folder, ``<home>/datastores/<name>/``.

Named here, apart from the registry that lists the folders and the source that opens them, so that
neither has to import the other for a file name.
"""

from __future__ import annotations

DATABASE_FILE = "datastore.db"
INDEX_FILE = "vectors.index"
CACHE_FILE = "embeddings.db"
POSTINGS_FOLDER = "bm25"  # precomputed BM25 (engine.retrieve.postings)
