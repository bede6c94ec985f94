"""Streaming pieces: stop strings that may straddle tokens, and a stream object with a result."""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence

from engine.generate.base import Completion
from engine.progress import CancelToken


class StopMatcher:
    """Cuts generated text at the first stop string, holding back text that might begin one.

    A stop string can arrive split over several tokens ("<|im" + "_end|>"), so the tail that is
    a prefix of some stop string is kept back until the next piece decides it.
    """

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = [stop for stop in stops if stop]
        self.pending = ""

    def feed(self, text: str) -> tuple[str, bool]:
        """Add a piece; return the text now safe to emit and whether a stop string was reached."""
        self.pending += text
        if not self.stops:
            out, self.pending = self.pending, ""
            return out, False
        hits = [index for index in (self.pending.find(stop) for stop in self.stops) if index >= 0]
        if hits:
            out, self.pending = self.pending[:min(hits)], ""
            return out, True
        hold = max((size for stop in self.stops for size in range(1, len(stop))
                    if self.pending.endswith(stop[:size])), default=0)
        cut = len(self.pending) - hold
        out, self.pending = self.pending[:cut], self.pending[cut:]
        return out, False

    def flush(self) -> str:
        """Held-back text that turned out not to start a stop string."""
        out, self.pending = self.pending, ""
        return out


class ChatStream(Iterator[str]):
    """Text pieces as the model produces them; ``completion`` holds the result once it ends.

    Iterate it (``for piece in stream``) or call :meth:`close` to stop early: the text so far is
    kept and the completion is marked cancelled. The model stays locked while a stream is open,
    so finish or close every stream (``with model.stream(...) as stream:`` does that).
    """

    def __init__(self, pieces: Generator[str, None, Completion], stop_token: CancelToken) -> None:
        self._pieces = pieces
        self._stop_token = stop_token
        self.completion: Completion | None = None

    def __iter__(self) -> ChatStream:
        return self

    def __next__(self) -> str:
        if self.completion is not None:
            raise StopIteration
        try:
            return next(self._pieces)
        except StopIteration as finished:
            self.completion = finished.value
            raise

    def close(self) -> Completion | None:
        """Stop at the next token boundary and return the (partial) completion."""
        if self.completion is None:
            self._stop_token.cancel()
            for _ in self:
                pass
        return self.completion

    def __enter__(self) -> ChatStream:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
