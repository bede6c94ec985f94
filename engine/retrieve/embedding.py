"""Filling a source's vector index: the one embedding loop the library and every datastore share.

Passages are embedded in steps through the embedding cache (so a cancelled or crashed run
resumes without recomputing) and added to the index, which is saved as it goes and whenever the
run stops early. When the index has outgrown its kind (exact search past ``FLAT_LIMIT`` vectors,
or IVF lists too few for its size) it is rebuilt from the cached vectors as IVF-SQ8.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from engine.embed import Embedder, EmbeddingCache, embed_passages
from engine.index import build_index, save_index, should_rebuild
from engine.index.build import VectorsSource
from engine.index.faiss_index import FaissIndex
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress
from engine.types import Passage

log = logging.getLogger(__name__)

# Passages embedded per step: each step is written to the cache and added to the index, so a
# cancel loses at most one step.
EMBED_STEP = 256
# The index file is rewritten at most this often during a long run (and always at the end).
SAVE_EVERY_SECONDS = 30.0


def embed_into_index(index: FaissIndex, index_path: Path, steps: Iterable[Sequence[Passage]], total: int,
                     embedder: Embedder, cache: EmbeddingCache, cached_vectors: VectorsSource,
                     progress: ProgressCallback = no_progress, cancel: CancelToken | None = None, *,
                     changed: bool = False) -> tuple[FaissIndex, int]:
    """Embed each step's passages into ``index`` and save it at ``index_path``.

    ``total`` is how many passages ``steps`` will yield (for progress); ``cached_vectors`` streams
    (passage ids, vectors) of the whole source from the cache, read only when the index must be
    rebuilt as another kind; ``changed`` says the caller already altered the index (removed stale
    vectors), so it is saved even when nothing is added. Returns the index (a new object when it
    was rebuilt) and how many passages were added. Cancel stops between steps and batches with
    what was finished saved.
    """
    progress(Progress("embed", 0, total, f"{total:,} passages to embed"))
    added = computed = 0
    dirty = changed
    last_save = time.monotonic()
    try:
        for step in steps:
            if cancel is not None:
                cancel.check()
            if not step:
                continue

            def report(inner: Progress, offset: int = added) -> None:
                progress(Progress("embed", min(total, offset + inner.done), total))

            result = embed_passages(embedder, cache, step, report, cancel)
            index.add([p.id for p in step], result.vectors)
            added += len(step)
            computed += result.computed
            dirty = True
            progress(Progress("embed", added, total, f"{added:,} of {total:,} passages embedded"))
            if time.monotonic() - last_save > SAVE_EVERY_SECONDS:
                save_index(index, index_path)
                last_save, dirty = time.monotonic(), False
    except BaseException:
        # Cancelled, Ctrl-C or a failure: keep what was embedded so the next run resumes.
        if dirty:
            save_index(index, index_path)
        raise
    if should_rebuild(index):
        # Grown past exact search (or shrunk below it): rebuild from the cached vectors.
        index = build_index(embedder.model_id, embedder.dimension, cached_vectors(), progress, cancel,
                            expected_count=len(index))
        dirty = True
    if dirty or not index_path.exists():
        save_index(index, index_path)
    # What a killed run had computed is in the cache, not in the index saved before the kill: it comes back
    # from there, and only the rest is computed.
    log.info("%d passages added to the index: %d embedded now, %d from vectors already in the cache", added,
             computed, added - computed)
    return index, added
