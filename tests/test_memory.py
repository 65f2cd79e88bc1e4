"""Tests for transformer_lib.memory: the tensor-memory meter counts what is created, once, and frees it."""

import torch

from transformer_lib.memory import PeakTensorMemory, peak_bytes

MiB = 2**20


def test_counts_new_tensors_and_not_views():
    x = torch.zeros(MiB // 4)  # created outside: not counted
    assert peak_bytes(lambda: x.view(4, -1).t()[0]) == 0
    assert peak_bytes(lambda: torch.ones(MiB // 4)) == MiB


def test_peak_is_the_largest_set_alive_at_once():
    def two_at_once():
        a = torch.ones(MiB // 4)
        b = a * 2  # a and b alive together: 2 MiB
        del a, b
        return torch.ones(MiB // 8)  # 0.5 MiB, after both were freed

    with PeakTensorMemory() as meter:
        kept = two_at_once()
    assert meter.peak == 2 * MiB
    assert meter.current == MiB // 2 and kept.numel() == MiB // 8
