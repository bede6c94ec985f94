"""Choosing, building and reopening indexes: the only place that decides between exact and IVF.

``open_or_rebuild`` is what the service calls at start-up: it loads the saved index if it is
sound and was built by the current model, and otherwise rebuilds it from the cached embeddings
(never a dimension-mismatch crash, never a half-usable index).
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from engine.errors import EngineError, IndexCorruptError
from engine.index.faiss_index import FaissIndex, FlatIndex, IVFIndex
from engine.index.storage import load_index, save_index
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress

log = logging.getLogger(__name__)

# Up to this many vectors exact search costs under ~10 ms a query on a 2-core machine (8.5 ms
# at 50k, 17 ms at 100k, 158 ms and 1.6 GiB at 1M), and the query embedding, BM25 and fusion
# need the rest of the 50 ms budget; IVF-SQ8 answers in 0.2-1.2 ms at recall@10 0.98 and
# 0.55 GiB at 1M (benchmarks/index_speed.py). Above it, IVF-SQ8.
FLAT_LIMIT = 50_000
# Training on more than this many vectors only slows the build; k-means quality has saturated.
MAX_TRAINING_VECTORS = 131_072

VectorBatches = Iterable[tuple[Sequence[str], np.ndarray]]
VectorsSource = Callable[[], VectorBatches]


def choose_kind(count: int, flat_limit: int = FLAT_LIMIT) -> str:
    """``"flat"`` for collections up to ``flat_limit`` vectors, ``"ivf-sq8"`` above."""
    return FlatIndex.kind if count <= flat_limit else IVFIndex.kind


def should_rebuild(index: FaissIndex, flat_limit: int = FLAT_LIMIT) -> bool:
    """Whether an index has outgrown (or shrunk below) its kind, or its IVF lists no longer fit its size.

    Adds never change an index's kind or its number of lists; call this after large additions
    or removals and rebuild from the cached embeddings when it says so.
    """
    if index.kind != choose_kind(len(index), flat_limit):
        return True
    return isinstance(index, IVFIndex) and IVFIndex.nlist_for(len(index)) >= 4 * index.nlist


def build_index(model_id: str, dimension: int, batches: VectorBatches, progress: ProgressCallback = no_progress,
                cancel: CancelToken | None = None, flat_limit: int = FLAT_LIMIT, kind: str | None = None,
                expected_count: int | None = None) -> FaissIndex:
    """Build an index from a stream of (passage ids, vectors) batches, choosing its kind by size.

    Batches are held back until ``flat_limit`` is passed (or the stream ends): a small
    collection becomes a :class:`FlatIndex`; a large one an :class:`IVFIndex` trained on what
    was held back, so the stream is read once and never held in memory whole. ``kind`` forces
    a choice (benchmarks, tests); ``expected_count``, when known, sizes the IVF lists for the
    final collection rather than for the part seen when training.
    """
    if kind is not None and kind not in (FlatIndex.kind, IVFIndex.kind):
        raise ValueError(f"unknown index kind {kind!r}")
    if kind is None and expected_count is not None:
        kind = choose_kind(expected_count, flat_limit)
    # Hold back enough to decide the kind, or (IVF known up front) enough to train on.
    hold_limit = flat_limit if kind is None else min(MAX_TRAINING_VECTORS, expected_count or MAX_TRAINING_VECTORS)
    held_ids: list[str] = []
    held_vectors: list[np.ndarray] = []
    held_count = 0
    index: FaissIndex | None = None
    added = 0
    total = expected_count or 0
    for passage_ids, vectors in batches:
        if cancel is not None:
            cancel.check()
        if index is not None:
            index.add(list(passage_ids), vectors)
            added += len(passage_ids)
        else:
            held_ids.extend(passage_ids)
            held_vectors.append(np.asarray(vectors, dtype=np.float32).reshape(len(passage_ids), dimension))
            held_count += len(passage_ids)
            if kind == FlatIndex.kind or held_count <= hold_limit:
                continue
            index = _trained_ivf(model_id, dimension, held_vectors, max(held_count, expected_count or 0))
            index.add(held_ids, np.concatenate(held_vectors))
            added = held_count
            held_ids, held_vectors = [], []
        progress(Progress("index", added, total, f"{added:,} vectors indexed"))
    if index is None:
        if kind == IVFIndex.kind and held_count:
            index = _trained_ivf(model_id, dimension, held_vectors, held_count)
        else:
            index = FlatIndex(model_id, dimension)
        if held_count:
            index.add(held_ids, np.concatenate(held_vectors))
        progress(Progress("index", held_count, held_count, f"{held_count:,} vectors indexed"))
    return index


def _trained_ivf(model_id: str, dimension: int, held_vectors: list[np.ndarray], final_count: int) -> IVFIndex:
    sample = np.concatenate(held_vectors)
    if len(sample) > MAX_TRAINING_VECTORS:
        # A fixed seed: the same data builds the same index, so benchmarks and bugs reproduce.
        chosen = np.random.default_rng(0).choice(len(sample), MAX_TRAINING_VECTORS, replace=False)
        sample = sample[np.sort(chosen)]
    nlist = min(IVFIndex.nlist_for(final_count), max(1, len(sample) // 39))
    index = IVFIndex(model_id, dimension, nlist=nlist)
    index.train(sample)
    return index


def open_or_rebuild(path: Path, model_id: str, dimension: int, vectors_source: VectorsSource,
                    progress: ProgressCallback = no_progress, cancel: CancelToken | None = None,
                    flat_limit: int = FLAT_LIMIT, expected_count: int | None = None) -> FaissIndex:
    """Load the index at ``path``; rebuild (and save) it when missing, damaged or built by another model.

    ``vectors_source`` is only called when a rebuild is needed; it returns the (passage ids,
    vectors) batches of the current model, typically read from the embedding cache;
    ``expected_count`` (how many it will yield, if known) sizes a large index well.
    """
    try:
        return load_index(path, model_id=model_id, dimension=dimension)
    except FileNotFoundError:
        log.info("no vector index at %s yet; building it", path)
    except IndexCorruptError as exc:
        log.warning("rebuilding the vector index: %s", exc)
    index = build_index(model_id, dimension, vectors_source(), progress, cancel, flat_limit,
                        expected_count=expected_count)
    try:
        save_index(index, path)
    except (OSError, EngineError) as exc:
        # A read-only library (or a full disk): the rebuilt index serves this process from memory,
        # and is rebuilt from the cache again next time; a search must not fail for want of a file.
        read_only = isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
        level = logging.INFO if read_only else logging.WARNING  # a read-only library: expected, not news
        log.log(level, "the rebuilt vector index could not be saved to %s (%s); using it without saving", path, exc)
    return index
