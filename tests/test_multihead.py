"""Tests for transformer_lib.multihead: equality with torch.nn.MultiheadAttention, masks, KV cache."""

import pytest
import torch
from torch import nn

from transformer_lib.attention import causal_mask
from transformer_lib.multihead import KVCache, MultiHeadAttention
from transformer_lib.tokens import lengths_to_mask

D, H = 8, 2


def twins(bias=True):
    torch.manual_seed(0)
    theirs = nn.MultiheadAttention(D, H, bias=bias, batch_first=True).double().eval()
    with torch.no_grad():  # non-zero biases, so that copying them is tested
        for p in theirs.parameters():
            p.copy_(torch.randn_like(p) * 0.5)
    return MultiHeadAttention.from_torch(theirs), theirs


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
def test_self_attention_equals_pytorch_with_padding_and_causal_masks(bias, need_weights):
    ours, theirs = twins(bias)
    x = torch.randn(3, 5, D, dtype=torch.float64, requires_grad=True)
    real = lengths_to_mask(torch.tensor([5, 3, 1]))  # (B, S), True at real tokens
    mask = real[:, None, None, :] & causal_mask(5)
    out, weights = ours(x, x, x, mask, need_weights=need_weights)
    ref, ref_weights = theirs(
        x, x, x, key_padding_mask=~real, attn_mask=~causal_mask(5), average_attn_weights=False
    )
    torch.testing.assert_close(out, ref)
    if need_weights:
        torch.testing.assert_close(weights, ref_weights)
    else:
        assert weights is None
    grad = torch.autograd.grad(out.sum(), x)[0]
    torch.testing.assert_close(grad, torch.autograd.grad(ref.sum(), x)[0])


def test_cross_attention_equals_pytorch():
    ours, theirs = twins()
    query = torch.randn(2, 3, D, dtype=torch.float64)
    memory = torch.randn(2, 6, D, dtype=torch.float64)
    real = lengths_to_mask(torch.tensor([6, 4]))
    out, weights = ours(query, memory, memory, real[:, None, None, :])
    ref, ref_weights = theirs(query, memory, memory, key_padding_mask=~real, average_attn_weights=False)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(weights, ref_weights)
    assert weights.shape == (2, H, 3, 6)


def test_is_causal_and_kv_cache_give_the_full_causal_result():
    ours, _ = twins()
    x = torch.randn(2, 6, D, dtype=torch.float64)
    full, _ = ours(x, x, x, causal_mask(6), need_weights=False)
    fast, _ = ours(x, x, x, need_weights=False, is_causal=True)
    torch.testing.assert_close(fast, full)
    cache = KVCache()
    prefix, _ = ours(x[:, :4], x[:, :4], x[:, :4], need_weights=False, is_causal=True, cache=cache)
    steps = [ours(x[:, t : t + 1], x[:, t : t + 1], x[:, t : t + 1], cache=cache)[0] for t in (4, 5)]
    assert len(cache) == 6
    torch.testing.assert_close(torch.cat([prefix, *steps], dim=1), full)


def test_fully_padded_row_has_no_nan():
    ours, _ = twins()
    x = torch.randn(2, 4, D, dtype=torch.float64)
    real = lengths_to_mask(torch.tensor([4, 0]))[:, None, None, :]
    for need_weights in (True, False):
        out, _ = ours(x, x, x, real, need_weights=need_weights)
        assert torch.isfinite(out).all()


def test_bad_arguments_raise_with_shapes():
    with pytest.raises(ValueError, match="d_model=10, num_heads=3"):
        MultiHeadAttention(10, 3)
    ours, _ = twins()
    x = torch.randn(2, 4, D, dtype=torch.float64)
    with pytest.raises(ValueError, match="key has 4, value has 3"):
        ours(x, x, x[:, :3])
    with pytest.raises(ValueError, match=r"d_model=8\), got \(2, 4, 6\)"):
        ours(x[..., :6], x, x)
    with pytest.raises(ValueError,
                       match=r"mask of shape \(3, 4\) cannot broadcast to attention scores of shape \(2, 2, 4, 4\)"):
        ours(x, x, x, torch.ones(3, 4, dtype=torch.bool))
