"""Passage ids <-> the int64 keys FAISS stores.

FAISS only knows int64 labels. Each passage id maps to a stable 63-bit key (blake2b of the id,
top bit cleared so the key is a non-negative int64 and never FAISS's "-1 = no result"), so the
same passage has the same key in every index, process and rebuild; the table maps keys back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import numpy as np

from engine.errors import EngineError

_MASK_63 = (1 << 63) - 1


def passage_key(passage_id: str) -> int:
    """The stable non-negative int64 FAISS label of ``passage_id``."""
    digest = hashlib.blake2b(passage_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") & _MASK_63


def passage_keys(passage_ids: Iterable[str]) -> np.ndarray:
    return np.fromiter((passage_key(pid) for pid in passage_ids), dtype=np.int64)


class IdTable:
    """Which passage ids an index holds, by key. Refuses the (astronomically rare) hash collision."""

    def __init__(self) -> None:
        self._names: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, passage_id: object) -> bool:
        return isinstance(passage_id, str) and self._names.get(passage_key(passage_id)) == passage_id

    def name(self, key: int) -> str | None:
        return self._names.get(key)

    def names(self) -> list[str]:
        return list(self._names.values())

    def keys_for_new(self, passage_ids: Sequence[str]) -> np.ndarray:
        """Keys for ``passage_ids``, after checking none collides with a different id already held."""
        keys = passage_keys(passage_ids)
        for passage_id, key in zip(passage_ids, keys.tolist(), strict=True):
            if "\n" in passage_id:
                raise ValueError(f"passage ids cannot contain a newline: {passage_id!r}")
            held = self._names.get(key)
            if held is not None and held != passage_id:
                raise EngineError(f"Passage ids {held!r} and {passage_id!r} share an index key; rename one of "
                                  "the documents and index again.")
        return keys

    def add(self, passage_ids: Sequence[str], keys: np.ndarray) -> None:
        self._names.update(zip(keys.tolist(), passage_ids, strict=True))

    def discard(self, keys: Iterable[int]) -> None:
        for key in keys:
            self._names.pop(key, None)

    def to_arrays(self) -> tuple[np.ndarray, bytes]:
        """Keys as int64 and ids as newline-joined UTF-8, in the same order (what gets saved)."""
        keys = np.fromiter(self._names.keys(), dtype=np.int64, count=len(self._names))
        return keys, "\n".join(self._names.values()).encode("utf-8")

    @classmethod
    def from_arrays(cls, keys: np.ndarray, names: bytes) -> IdTable:
        table = cls()
        decoded = names.decode("utf-8").split("\n") if names else []
        if len(decoded) != len(keys):
            raise ValueError(f"{len(keys)} keys but {len(decoded)} passage ids")
        table._names = dict(zip(keys.tolist(), decoded, strict=True))
        return table
