"""Tests for chapter 11's modules: RoPE, RMSNorm, SwiGLU, grouped-query attention, the modern GPT, tiled attention."""

import pytest
import torch
import torch.nn.functional as F

from transformer_lib.attention import causal_mask, scaled_dot_product_attention
from transformer_lib.models import GPT
from transformer_lib.modern import GroupedQueryAttention, ModernBlock, ModernConfig, RMSNorm, SwiGLUFeedForward
from transformer_lib.multihead import KVCache, MultiHeadAttention
from transformer_lib.rope import RotaryEmbedding, apply_rotary, rotary_cos_sin
from transformer_lib.tiled import tiled_attention
from transformer_lib.weights import rope_rows_from_interleaved

F64 = torch.float64


def test_rope_scores_depend_only_on_the_offset():
    torch.manual_seed(0)
    rope = RotaryEmbedding(8)
    q, k = torch.randn(8, dtype=F64), torch.randn(8, dtype=F64)

    def score(t, s):  # q at position t, k at position s
        rq = rope(q.expand(t + 1, 8), 0)[t]
        rk = rope(k.expand(s + 1, 8), 0)[s]
        return rq @ rk

    for offset in (0, 1, 5):
        scores = torch.stack([score(s + offset, s) for s in range(0, 30, 7)])
        assert torch.allclose(scores, scores[0].expand_as(scores), atol=1e-12), offset
    assert not torch.allclose(score(3, 0), score(4, 0))  # a different offset gives a different score


def test_rope_is_a_rotation_and_start_shifts_positions():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 10, 16, dtype=F64)
    rope = RotaryEmbedding(16)
    assert torch.allclose(rope(x).norm(dim=-1), x.norm(dim=-1))
    assert torch.equal(rope(x)[..., 0, :], x[..., 0, :])  # position 0 is not turned
    assert torch.allclose(rope(x[..., 4:, :], start=4), rope(x)[..., 4:, :])
    # d_head = 4, base = 100: pair 0 is features (0, 2), turned by 1 rad; pair 1 is (1, 3), by 0.1 rad
    cos, sin = rotary_cos_sin(torch.tensor([1]), 4, base=100.0)
    turned = apply_rotary(torch.eye(4, dtype=F64)[:2, None, :], cos, sin)[:, 0]
    c1, s1, c2, s2 = (torch.tensor(v, dtype=F64) for v in (1.0, 1.0, 0.1, 0.1))
    expected = torch.stack([torch.stack([c1.cos(), c1 * 0, s1.sin(), c1 * 0]),
                            torch.stack([c2 * 0, c2.cos(), c2 * 0, s2.sin()])])
    assert torch.allclose(turned, expected, atol=1e-15)


def meta_rotary(x, base=10000.0):
    """Meta's reference RoPE: pairs (2i, 2i + 1) of ``x`` ``(B, T, h, d_head)`` as complex numbers, turned."""
    T, d_head = x.shape[1], x.shape[-1]
    theta = base ** (-torch.arange(0, d_head, 2, dtype=F64) / d_head)
    turns = torch.polar(torch.ones(T, d_head // 2, dtype=F64), torch.arange(T, dtype=F64)[:, None] * theta)
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], d_head // 2, 2))
    return torch.view_as_real(pairs * turns[:, None]).flatten(-2)


def test_meta_layout_weights_reordered_for_rotate_half_give_the_same_scores():
    torch.manual_seed(0)
    B, T, h, d_head, d_model = 2, 7, 3, 8, 20
    x = torch.randn(B, T, d_model, dtype=F64)
    w_q, w_k = (torch.randn(h * d_head, d_model, dtype=F64) for _ in range(2))  # Meta's layout

    def scores(q, k):  # (B, T, h, d_head) -> (B, h, T, T)
        return torch.einsum("bthd,bshd->bhts", q, k)

    theirs = scores(meta_rotary((x @ w_q.T).view(B, T, h, d_head)), meta_rotary((x @ w_k.T).view(B, T, h, d_head)))
    rope = RotaryEmbedding(d_head)

    def ours(w_q, w_k):
        q, k = ((x @ w.T).view(B, T, h, d_head).transpose(1, 2) for w in (w_q, w_k))  # (B, h, T, d_head)
        return scores(rope(q).transpose(1, 2), rope(k).transpose(1, 2))

    reordered = ours(rope_rows_from_interleaved(w_q, h), rope_rows_from_interleaved(w_k, h))
    assert torch.allclose(reordered, theirs, atol=1e-12)
    assert not torch.allclose(ours(w_q, w_k), theirs, atol=1e-3)  # the layouts differ: loading unchanged is wrong
    with pytest.raises(ValueError, match="d_head even"):
        rope_rows_from_interleaved(torch.zeros(9, 4), 3)


def test_rope_rejects_odd_or_mismatched_sizes():
    with pytest.raises(ValueError, match="even"):
        RotaryEmbedding(7)
    with pytest.raises(ValueError, match="d_head=8"):
        RotaryEmbedding(8)(torch.randn(2, 5, 6))
    cos, sin = rotary_cos_sin(torch.arange(5), 8)
    with pytest.raises(ValueError, match=r"\(5, 8\)"):
        apply_rotary(torch.randn(2, 4, 8), cos, sin)


def test_rmsnorm_equals_torch():
    torch.manual_seed(0)
    theirs = torch.nn.RMSNorm(12, eps=1e-6, dtype=F64)
    torch.nn.init.normal_(theirs.weight)
    ours = RMSNorm(12, eps=1e-6).double()
    ours.load_state_dict(theirs.state_dict())
    x = torch.randn(3, 5, 12, dtype=F64) * 3 + 1
    assert torch.allclose(ours(x), theirs(x), atol=1e-14, rtol=0)
    with pytest.raises(ValueError, match="d_model=12"):
        ours(torch.randn(3, 5, 10, dtype=F64))


def test_swiglu_is_the_gated_formula():
    torch.manual_seed(0)
    ffn = SwiGLUFeedForward(6, 10).double()
    x = torch.randn(2, 3, 6, dtype=F64)
    gate, up, down = ffn.gate.weight, ffn.up.weight, ffn.down.weight
    expected = (torch.nn.functional.silu(x @ gate.T) * (x @ up.T)) @ down.T
    assert torch.allclose(ffn(x), expected, atol=1e-14)
    assert sum(p.numel() for p in ffn.parameters()) == 3 * 6 * 10


def test_gqa_with_one_kv_head_per_query_head_is_multi_head_attention():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).double()
    gqa = GroupedQueryAttention(16, 4).double()
    gqa.load_state_dict(mha.state_dict())
    x = torch.randn(2, 7, 16, dtype=F64)
    theirs, _ = mha(x, x, x, causal_mask(7))
    ours, _ = gqa(x, is_causal=True)
    assert torch.allclose(ours, theirs, atol=1e-14)


@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
def test_gqa_shares_kv_heads_between_query_groups(num_kv_heads):
    torch.manual_seed(0)
    gqa = GroupedQueryAttention(16, 4, num_kv_heads, bias=False).double()
    assert gqa.in_proj.weight.shape == (16 + 2 * num_kv_heads * 4, 16)
    x = torch.randn(2, 6, 16, dtype=F64)
    out, weights = gqa(x, need_weights=True, is_causal=True)
    assert out.shape == (2, 6, 16) and weights.shape == (2, 4, 6, 6)
    # reference: each query head i reads key/value head i // (h / h_kv), written out by hand
    q, k, v = gqa.in_proj(x).split([16, num_kv_heads * 4, num_kv_heads * 4], dim=-1)
    q = q.view(2, 6, 4, 4).transpose(1, 2)
    k, v = (t.view(2, 6, num_kv_heads, 4).transpose(1, 2) for t in (k, v))
    group = 4 // num_kv_heads
    heads = [scaled_dot_product_attention(q[:, i], k[:, i // group], v[:, i // group], causal_mask(6))[0]
             for i in range(4)]
    expected = gqa.out_proj(torch.stack(heads, 1).transpose(1, 2).reshape(2, 6, 16))
    assert torch.allclose(out, expected, atol=1e-14)


@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
def test_gqa_cache_holds_kv_heads_only_and_gives_the_same_outputs(num_kv_heads):
    torch.manual_seed(0)
    gqa = GroupedQueryAttention(16, 4, num_kv_heads, rotary=RotaryEmbedding(4)).double()
    x = torch.randn(2, 9, 16, dtype=F64)
    full, _ = gqa(x, is_causal=True)
    cache = KVCache()
    parts = [gqa(x[:, :5], is_causal=True, cache=cache)[0]]
    for t in range(5, 9):
        parts.append(gqa(x[:, t : t + 1], cache=cache)[0])
    assert torch.allclose(torch.cat(parts, 1), full, atol=1e-13)
    assert cache.key.shape == (2, num_kv_heads, 9, 4)


def test_gqa_rejects_bad_head_counts_and_shapes():
    with pytest.raises(ValueError, match="num_kv_heads=3"):
        GroupedQueryAttention(16, 4, 3)
    with pytest.raises(ValueError, match=r"d_model=16.*\(2, 5, 8\)"):
        GroupedQueryAttention(16, 4)(torch.randn(2, 5, 8))


def test_modern_config_defaults_are_the_gpt2_layout():
    torch.manual_seed(0)
    plain = GPT(13, 16, 4, 2, 32, 10).double().eval()
    switched = GPT(13, 16, 4, 2, 32, 10, config=ModernConfig()).double().eval()
    assert sum(p.numel() for p in plain.parameters()) == sum(p.numel() for p in switched.parameters())
    names = {"self_attention_residual.norm": "attention_norm", "feed_forward_residual.norm": "feed_forward_norm",
             "self_attention.": "attention."}
    state = {}
    for name, tensor in plain.state_dict().items():
        for old, new in names.items():
            name = name.replace(old, new)
        state[name] = tensor
    switched.load_state_dict(state)
    idx = torch.randint(0, 13, (3, 10))
    assert torch.allclose(switched(idx), plain(idx), atol=1e-13)
    with pytest.raises(ValueError, match="norm must be one of"):
        ModernConfig(norm="batch")


def test_gpt_takes_the_tanh_gelu_of_gpt2_checkpoints():
    torch.manual_seed(0)
    exact = GPT(13, 16, 4, 1, 32, 10).double().eval()
    tanh = GPT(13, 16, 4, 1, 32, 10, activation="gelu_tanh").double().eval()
    tanh.load_state_dict(exact.state_dict())
    x = 3 * torch.randn(2, 5, 16, dtype=F64)
    ffn = tanh.blocks.layers[0].feed_forward
    assert torch.allclose(ffn(x), ffn.linear2(F.gelu(ffn.linear1(x), approximate="tanh")), atol=1e-14)
    idx = torch.randint(0, 13, (2, 10))
    assert not torch.allclose(tanh(idx), exact(idx), atol=1e-9)
    with pytest.raises(ValueError, match="activation='gelu_tanh' applies to the GPT-2 layout"):
        GPT(13, 16, 4, 1, 32, 10, config=ModernConfig(), activation="gelu_tanh")


@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
def test_llama_style_gpt_generates_the_same_tokens_with_and_without_cache(num_kv_heads):
    torch.manual_seed(0)
    model = GPT(13, 16, 4, 2, 24, 32, config=ModernConfig.llama(num_kv_heads, tie_embeddings=False)).double().eval()
    assert model.embedding.position is None and model.lm_head.weight is not model.embedding.token.weight
    idx = torch.randint(0, 13, (2, 4))
    cached = model.generate(idx, 12, temperature=0)
    assert torch.equal(cached, model.generate(idx, 12, temperature=0, use_cache=False))
    assert model.blocks.layers[0].attention.rotary is not None
    assert isinstance(model.blocks.layers[0], ModernBlock)


def test_generate_with_top_p_draws_only_from_the_nucleus():
    torch.manual_seed(0)
    model = GPT(13, 16, 4, 1, 24, 32).eval()
    idx = torch.zeros(200, 1, dtype=torch.long)
    with torch.no_grad():
        probs = model(idx[:1])[0, -1].softmax(-1)
    order = probs.argsort(descending=True)
    nucleus = order[: int((probs[order].cumsum(0) < 0.5).sum()) + 1]
    drawn = model.generate(idx, 1, top_p=0.5, generator=torch.Generator().manual_seed(0))[:, 1]
    assert set(drawn.tolist()) <= set(nucleus.tolist())
    assert len(set(model.generate(idx, 1, generator=torch.Generator().manual_seed(0))[:, 1].tolist())) > len(nucleus)


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("T,S,block", [(10, 10, 3), (16, 16, 4), (7, 13, 4), (1, 5, 2), (33, 33, 64)])
def test_tiled_attention_equals_the_reference(is_causal, T, S, block):
    if is_causal and S < T:
        pytest.skip("causal needs S >= T")
    torch.manual_seed(0)
    q, k = torch.randn(2, 3, T, 8, dtype=F64) * 4, torch.randn(2, 3, S, 8, dtype=F64) * 4  # large scores
    v = torch.randn(2, 3, S, 5, dtype=F64)
    expected, _ = scaled_dot_product_attention(q, k, v, is_causal=is_causal)
    ours, weights = tiled_attention(q, k, v, is_causal=is_causal, block_size=block)
    assert weights is None
    assert torch.allclose(ours, expected, atol=1e-13)


def test_tiled_attention_rejects_bad_arguments():
    q = torch.randn(1, 4, 8)
    with pytest.raises(ValueError, match="block_size"):
        tiled_attention(q, q, q, block_size=0)
    with pytest.raises(ValueError, match="T=4, S=2"):
        tiled_attention(q, q[:, :2], q[:, :2], is_causal=True)
    with pytest.raises(ValueError, match="d_k"):
        tiled_attention(q, torch.randn(1, 4, 6), torch.randn(1, 4, 8))
