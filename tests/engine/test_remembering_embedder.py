"""The support embedder remembers the vectors of the texts it embedded last."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.embed import HashingEmbedder
from engine.embed.remembering import RememberingEmbedder


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str], *args: object, **kwargs: object) -> np.ndarray:
        self.embedded.extend(texts)
        return super().embed(texts)


def test_a_text_embedded_before_is_not_embedded_again_and_gets_the_same_vector() -> None:
    inner = CountingEmbedder()
    embedder = RememberingEmbedder(inner)
    first = embedder.embed(["SPECTER is trained on citations.", "S2ORC has 81.1M papers."])
    again = embedder.embed(["S2ORC has 81.1M papers.", "A new sentence.", "S2ORC has 81.1M papers."])
    assert inner.embedded == ["SPECTER is trained on citations.", "S2ORC has 81.1M papers.", "A new sentence."]
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[2], first[1])
    assert np.allclose(again, HashingEmbedder().embed(["S2ORC has 81.1M papers.", "A new sentence.",
                                                        "S2ORC has 81.1M papers."]))
    assert embedder.model_id == inner.model_id and embedder.dimension == inner.dimension


def test_only_the_last_texts_are_remembered() -> None:
    inner = CountingEmbedder()
    embedder = RememberingEmbedder(inner, max_texts=2)
    embedder.embed(["one", "two"])
    embedder.embed(["one"])  # used again: "two" is now the oldest
    embedder.embed(["three"])
    assert embedder.remembered() == 2
    inner.embedded.clear()
    embedder.embed(["one", "two", "three"])
    assert inner.embedded == ["two"]


def test_nothing_to_embed_gives_an_empty_matrix_of_the_right_width() -> None:
    embedder = RememberingEmbedder(HashingEmbedder(dimension=16))
    assert embedder.embed([]).shape == (0, 16)
