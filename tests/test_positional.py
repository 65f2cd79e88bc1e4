"""Tests for transformer_lib.positional."""

import math

import pytest
import torch

from transformer_lib.positional import (
    LearnedPositionalEmbedding,
    PositionalEncoding,
    make_positional,
    sinusoidal_positional_encoding,
)


@pytest.mark.parametrize("d_model", [6, 7])
def test_sinusoid_matches_the_formula(d_model):
    pe = sinusoidal_positional_encoding(10, d_model)
    assert pe.shape == (10, d_model)
    for p in (0, 3, 9):
        for j in range(d_model):
            angle = p / 10000 ** (2 * (j // 2) / d_model)
            expected = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            assert pe[p, j].item() == pytest.approx(expected, abs=1e-6)


def test_shift_by_k_is_a_rotation_independent_of_position():
    d_model, k = 8, 5
    pe = sinusoidal_positional_encoding(60, d_model)
    shift = torch.zeros(d_model, d_model)  # PE[p + k] = PE[p] @ shift, one 2x2 rotation per pair
    for i in range(d_model // 2):
        angle = torch.tensor(k / 10000 ** (2 * i / d_model))
        c, s = torch.cos(angle), torch.sin(angle)
        shift[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.stack([torch.stack([c, s]), torch.stack([-s, c])]).T
    torch.testing.assert_close(pe[:-k] @ shift, pe[k:], atol=1e-5, rtol=0)


def test_modules_add_positions_from_start():
    x = torch.randn(2, 4, 6)
    sinusoid = PositionalEncoding(6, max_len=10)
    torch.testing.assert_close(sinusoid(x, start=3) - x, sinusoidal_positional_encoding(10, 6)[3:7].expand(2, 4, 6))
    learned = LearnedPositionalEmbedding(10, 6)
    torch.testing.assert_close(learned(x, start=2) - x, learned.embedding.weight[2:6].expand(2, 4, 6))


def test_too_long_and_bad_kind_raise():
    for module in (PositionalEncoding(6, max_len=4), LearnedPositionalEmbedding(4, 6)):
        with pytest.raises(ValueError, match=r"max_len=4.*T=5"):
            module(torch.zeros(1, 5, 6))
        with pytest.raises(ValueError, match=r"d_model=6\), got \(1, 3, 5\)"):
            module(torch.zeros(1, 3, 5))
    assert make_positional(None, 4, 6) is None
    with pytest.raises(ValueError, match="rotary"):
        make_positional("rotary", 4, 6)
