"""Tests for transformer_lib.attention: masks, masked softmax, dot-product and additive attention."""

import pytest
import torch
import torch.nn.functional as F

from transformer_lib.attention import (
    AdditiveAttention,
    causal_mask,
    masked_softmax,
    scaled_dot_product_attention,
)
from transformer_lib.tokens import lengths_to_mask


def qkv(B=2, h=3, T=4, S=5, d_k=6, d_v=7, dtype=torch.float64, requires_grad=False):
    torch.manual_seed(0)
    shapes = [(B, h, T, d_k), (B, h, S, d_k), (B, h, S, d_v)]
    return [torch.randn(s, dtype=dtype, requires_grad=requires_grad) for s in shapes]


def test_causal_mask():  # the padding mask is tokens.lengths_to_mask, tested with the tokens
    assert torch.equal(causal_mask(3), torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool))


def test_masked_softmax_zero_where_masked_and_rows_sum_to_one():
    scores = torch.randn(2, 3, 4)
    mask = torch.tensor([[True, True, False, False], [True, False, True, True]])[:, None, :]
    weights = masked_softmax(scores, mask)
    assert torch.all(weights[~mask.expand_as(weights)] == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3))
    torch.testing.assert_close(masked_softmax(scores), torch.softmax(scores, -1))


def test_masked_softmax_fully_masked_row_is_zero_with_finite_gradient():
    scores = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[False] * 4, [True, True, False, True]])
    weights = masked_softmax(scores, mask)
    assert torch.equal(weights[0], torch.zeros(4, dtype=torch.float64))
    (weights * torch.randn(2, 4, dtype=torch.float64)).sum().backward()
    assert torch.isfinite(scores.grad).all()


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("masking", ["none", "padding", "causal", "both"])
def test_sdpa_matches_pytorch(need_weights, masking):
    q, k, v = qkv(T=5, S=5)
    pad = lengths_to_mask(torch.tensor([5, 3]))[:, None, None, :]
    mask = {"none": None, "padding": pad, "causal": causal_mask(5), "both": pad & causal_mask(5)}[masking]
    out, weights = scaled_dot_product_attention(q, k, v, mask, need_weights=need_weights)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    assert (weights is not None) == need_weights
    if need_weights:
        assert weights.shape == (2, 3, 5, 5)


@pytest.mark.parametrize("need_weights", [True, False])
def test_is_causal_equals_explicit_causal_mask(need_weights):
    q, k, v = qkv(T=5, S=5)
    pad = lengths_to_mask(torch.tensor([5, 2]))[:, None, None, :]
    for mask in (None, pad):
        expected = mask & causal_mask(5) if mask is not None else causal_mask(5)
        out, _ = scaled_dot_product_attention(q, k, v, mask, need_weights=need_weights, is_causal=True)
        ref, _ = scaled_dot_product_attention(q, k, v, expected)
        torch.testing.assert_close(out, ref)


def test_explicit_and_fused_paths_agree_with_gradients():
    q, k, v = qkv(requires_grad=True)
    mask = torch.rand(2, 1, 4, 5) > 0.3
    mask[..., 0] = True
    grads = []
    for need_weights in (True, False):
        out, _ = scaled_dot_product_attention(q, k, v, mask, need_weights=need_weights)
        grads.append(torch.autograd.grad(out.pow(2).sum(), (q, k, v)))
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b)


def test_sdpa_gradcheck():
    q, k, v = qkv(B=1, h=2, T=3, S=4, d_k=2, d_v=3, requires_grad=True)
    mask = torch.tensor([[True, True, False, True], [False] * 4, [True] * 4])
    assert torch.autograd.gradcheck(lambda q, k, v: scaled_dot_product_attention(q, k, v, mask)[0], (q, k, v))
    assert torch.autograd.gradcheck(
        lambda q, k, v: scaled_dot_product_attention(q, k, v, mask, need_weights=False)[0], (q, k, v)
    )


@pytest.mark.parametrize("need_weights", [True, False])
def test_fully_masked_query_gives_zero_output_not_nan(need_weights):
    q, k, v = qkv()
    mask = torch.ones(2, 1, 4, 5, dtype=torch.bool)
    mask[1, 0, 2] = False
    out, weights = scaled_dot_product_attention(q, k, v, mask, need_weights=need_weights)
    assert torch.isfinite(out).all()
    assert torch.equal(out[1, :, 2], torch.zeros_like(out[1, :, 2]))
    if need_weights:
        assert torch.equal(weights[1, :, 2], torch.zeros_like(weights[1, :, 2]))


def test_sdpa_scales_by_sqrt_d_k():
    q, k, v = qkv(d_k=16)
    _, weights = scaled_dot_product_attention(q, k, v)
    expected = torch.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1)
    torch.testing.assert_close(weights, expected)


def test_sdpa_bad_inputs_name_the_shapes():
    q, k, v = qkv()
    with pytest.raises(ValueError,
                       match=r"mask of shape \(2, 3\) cannot broadcast to attention scores of shape \(2, 3, 4, 5\)"):
        scaled_dot_product_attention(q, k, v, torch.ones(2, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="key and value must have the same length S: key has 5, value has 4"):
        scaled_dot_product_attention(q, k, v[..., :4, :])
    with pytest.raises(ValueError, match="same feature size d_k: query has 6, key has 5"):
        scaled_dot_product_attention(q, k[..., :5], v)
    with pytest.raises(TypeError, match="boolean"):
        scaled_dot_product_attention(q, k, v, torch.ones(5))


def test_additive_attention_computes_bahdanau_score():
    torch.manual_seed(0)
    attention = AdditiveAttention(query_dim=3, key_dim=4, hidden_dim=5).double()
    query, keys, values = torch.randn(2, 3).double(), torch.randn(2, 6, 4).double(), torch.randn(2, 6, 7).double()
    mask = lengths_to_mask(torch.tensor([6, 2]))
    context, weights = attention(query, keys, values, mask)
    assert context.shape == (2, 7) and weights.shape == (2, 6)
    W_q, W_k, w_v = attention.query_proj.weight, attention.key_proj.weight, attention.score_proj.weight
    for b in range(2):
        scores = torch.stack([w_v @ torch.tanh(W_q @ query[b] + W_k @ keys[b, s]) for s in range(6)]).squeeze(-1)
        scores = scores.masked_fill(~mask[b], float("-inf"))
        expected = torch.softmax(scores, dim=0)
        torch.testing.assert_close(weights[b], expected)
        torch.testing.assert_close(context[b], expected @ values[b])


def test_additive_attention_many_queries_and_bad_shapes():
    torch.manual_seed(0)
    attention = AdditiveAttention(3, 4, 5)
    keys, values = torch.randn(2, 6, 4), torch.randn(2, 6, 7)
    queries = torch.randn(2, 3, 3)
    context, weights = attention(queries, keys, values)
    single, single_weights = attention(queries[:, 1], keys, values)
    torch.testing.assert_close(context[:, 1], single)
    torch.testing.assert_close(weights[:, 1], single_weights)
    with pytest.raises(ValueError, match="keys has 6, values has 5"):
        attention(queries, keys, values[:, :5])
    with pytest.raises(ValueError, match=r"mask of shape \(2, 5\) cannot broadcast"):
        attention(queries[:, 0], keys, values, torch.ones(2, 5, dtype=torch.bool))


def test_additive_attention_reuses_projected_keys():
    torch.manual_seed(0)
    attention = AdditiveAttention(3, 4, 5)
    query, keys, values = torch.randn(2, 3), torch.randn(2, 6, 4), torch.randn(2, 6, 7)
    expected = attention(query, keys, values)
    projected = attention.key_proj(keys)
    for got, want in zip(attention(query, keys, values, projected_keys=projected), expected):
        torch.testing.assert_close(got, want)
    with pytest.raises(ValueError,
                       match=r"projected_keys must be \(B, S, hidden_dim\) for keys \(2, 6, 4\), got \(2, 5, 5\)"):
        attention(query, keys, values, projected_keys=projected[:, :5])
