"""Prompt batches sized so a Stop is answered within about a second at any reading speed."""

from __future__ import annotations

from engine.generate.llama import CancelBatches


def test_a_slow_model_reads_small_batches_and_a_fast_one_grows_to_the_limit() -> None:
    slow = CancelBatches(512)
    assert slow.size == 32  # unknown speed: a small first batch
    slow.took(32, 1.0)  # 32 tokens a second (a 1.5B model on two busy cores)
    assert slow.size == 12  # ~0.4 s per batch from now on
    slow.took(12, 0.4)
    assert 8 <= slow.size <= 13

    fast = CancelBatches(512)
    for _ in range(6):
        fast.took(fast.size, fast.size / 3000)  # 3,000 tokens a second
    assert fast.size == 512  # the batch llama.cpp was built for, reached in doublings


def test_sizes_stay_within_bounds_whatever_is_measured() -> None:
    batches = CancelBatches(64)
    batches.took(0, 1.0)
    batches.took(10, 0.0)
    assert batches.size == 32
    batches.took(32, 100.0)
    assert batches.size == 8
    assert CancelBatches(4).size == 4 and CancelBatches(4).least == 4
